#include "broker/ssh/http_wire.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace skyslurm::ssh {
namespace {

bool HeaderIs(std::string_view line, std::string_view name) {
  if (line.size() <= name.size() || line[name.size()] != ':') return false;
  return std::equal(name.begin(), name.end(), line.begin(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  });
}

std::string_view HeaderValue(std::string_view line) {
  std::string_view v = line.substr(line.find(':') + 1);
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r'))
    v.remove_suffix(1);
  return v;
}

bool ParseSize(std::string_view text, int base, std::size_t* out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out, base);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

}  // namespace

std::string HttpRequestText(std::string_view method, std::string_view path, std::string_view body) {
  std::string out = fmt::format(
      "{} {} HTTP/1.1\r\nHost: slurmrestd\r\nAccept: application/json\r\n", method, path);
  if (!body.empty()) out += "Content-Type: application/json\r\n";
  out += fmt::format("Content-Length: {}\r\n\r\n", body.size());
  out.append(body);
  return out;
}

Result<std::optional<HttpAnswer>> TakeHttpAnswer(std::string& buffer) {
  const std::size_t head_end = buffer.find("\r\n\r\n");
  if (head_end == std::string::npos) {
    if (buffer.size() > 65536) return InternalError("slurmrestd: an answer's header is too long");
    return std::optional<HttpAnswer>();
  }
  const std::string_view head(buffer.data(), head_end);
  HttpAnswer answer;
  // "HTTP/1.1 200 OK"
  const std::size_t first_eol = head.find("\r\n");
  const std::string_view status_line = head.substr(0, first_eol);
  if (!status_line.starts_with("HTTP/1.") || status_line.size() < 12) {
    return InternalError(
        fmt::format("slurmrestd: not an HTTP answer: '{}'", status_line.substr(0, 80)));
  }
  std::size_t status = 0;
  if (!ParseSize(status_line.substr(9, 3), 10, &status)) {
    return InternalError(
        fmt::format("slurmrestd: bad status line '{}'", status_line.substr(0, 80)));
  }
  answer.status = static_cast<int>(status);
  std::optional<std::size_t> length;
  bool chunked = false;
  std::size_t pos = first_eol == std::string_view::npos ? head.size() : first_eol + 2;
  while (pos < head.size()) {
    std::size_t eol = head.find("\r\n", pos);
    if (eol == std::string_view::npos) eol = head.size();
    const std::string_view line = head.substr(pos, eol - pos);
    if (HeaderIs(line, "Content-Length")) {
      std::size_t n = 0;
      if (!ParseSize(HeaderValue(line), 10, &n)) {
        return InternalError(fmt::format("slurmrestd: bad Content-Length '{}'", line));
      }
      if (n > kMaxHttpBody) {
        return InternalError(
            fmt::format("slurmrestd: an answer of {} bytes is over the {} taken", n, kMaxHttpBody));
      }
      length = n;
    } else if (HeaderIs(line, "Connection")) {
      std::string v(HeaderValue(line));
      for (char& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      answer.close = v == "close";
    } else if (HeaderIs(line, "Transfer-Encoding")) {
      chunked = HeaderValue(line).find("chunked") != std::string_view::npos;
    }
    pos = eol + 2;
  }
  const std::size_t body_start = head_end + 4;
  if (chunked) {
    std::string body;
    std::size_t at = body_start;
    while (true) {
      const std::size_t eol = buffer.find("\r\n", at);
      if (eol == std::string::npos) {
        if (buffer.size() - at > 1024)
          return InternalError("slurmrestd: a chunk's size line is too long");
        return std::optional<HttpAnswer>();
      }
      std::string_view size_text(buffer.data() + at, eol - at);
      size_text = size_text.substr(0, size_text.find(';'));
      std::size_t n = 0;
      if (!ParseSize(size_text, 16, &n)) {
        return InternalError(
            fmt::format("slurmrestd: bad chunk size '{}'", size_text.substr(0, 40)));
      }
      if (n > kMaxHttpBody || body.size() + n > kMaxHttpBody) {
        return InternalError(
            fmt::format("slurmrestd: an answer over the {} bytes taken", kMaxHttpBody));
      }
      if (buffer.size() - eol < 2 + n + 2) return std::optional<HttpAnswer>();
      if (n == 0) {
        // No trailers from slurmrestd: the last chunk ends with one CRLF.
        buffer.erase(0, eol + 4);
        break;
      }
      body.append(buffer, eol + 2, n);
      at = eol + 2 + n + 2;
    }
    answer.body = std::move(body);
    return std::optional<HttpAnswer>(std::move(answer));
  }
  if (!length) {
    return InternalError("slurmrestd: an answer with neither Content-Length nor chunks");
  }
  if (buffer.size() < body_start + *length) return std::optional<HttpAnswer>();
  answer.body = buffer.substr(body_start, *length);
  buffer.erase(0, body_start + *length);
  return std::optional<HttpAnswer>(std::move(answer));
}

}  // namespace skyslurm::ssh
