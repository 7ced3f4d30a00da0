// HTTP/1.1 as slurmrestd speaks it on a byte stream (an SSH channel running
// `slurmrestd` inetd-style: requests on its stdin, answers on its stdout),
// with keep-alive so that one process answers every request of a
// connection's life. Pure text in, text out: no I/O here.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "broker/util/status.h"

namespace skyslurm::ssh {

struct HttpAnswer {
  int status = 0;  // 200, 404, ...
  std::string body;
  // "Connection: close": the server ends the stream after this answer
  // (slurmrestd does after every error).
  bool close = false;
};

// One request: `body` is JSON when not empty.
std::string HttpRequestText(std::string_view method, std::string_view path, std::string_view body);

// The largest answer body taken (a cluster's whole queue as JSON is a few
// MiB); a larger one, by Content-Length or chunks, is an error saying so,
// as is a header over 64 KiB: a broken or hostile slurmrestd cannot make
// the reader loop or grow without end.
inline constexpr std::size_t kMaxHttpBody = std::size_t{256} << 20;

// Takes the first whole answer from the front of `buffer` (removing it), or
// nullopt while it is incomplete. Bodies sized by Content-Length or sent
// chunked; anything else is an error (the stream cannot be followed).
Result<std::optional<HttpAnswer>> TakeHttpAnswer(std::string& buffer);

}  // namespace skyslurm::ssh
