// One error vocabulary for all of skyslurm: a Status carries a code and a
// message meant for the user (say what failed and, where known, how to fix
// it); Result<T> is a T or a non-OK Status. No exceptions cross module or ABI
// boundaries; code that calls throwing libraries converts at the call site.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace skyslurm {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // bad input from the user: an option, a script, a config line
  kNotFound,            // a file, a command, a job that does not exist
  kAlreadyExists,       // e.g. a sky id already submitted
  kPermissionDenied,    // refused by the OS, sshd or Slurm
  kUnauthenticated,     // host key or user key not accepted
  kFailedPrecondition,  // the world is not in the state the call needs
  kUnavailable,         // a cluster or login node cannot be reached now
  kDeadlineExceeded,    // a call ran out of time
  kUnimplemented,
  kInternal,  // a bug of ours
};

// The lower-case name of a code, as shown to users ("invalid argument").
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message);

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "<message>" for user-facing output; "ok" when OK.
  std::string ToString() const;

  // The same status with "<context>: " put before the message, unless the
  // message already starts with the context as a word ("beta needs ...",
  // "beta: ..."). OK stays OK.
  Status WithContext(std::string_view context) const;

  friend bool operator==(const Status&, const Status&) = default;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
Status InvalidArgumentError(std::string message);
Status NotFoundError(std::string message);
Status AlreadyExistsError(std::string message);
Status PermissionDeniedError(std::string message);
Status UnauthenticatedError(std::string message);
Status FailedPreconditionError(std::string message);
Status UnavailableError(std::string message);
Status DeadlineExceededError(std::string message);
Status UnimplementedError(std::string message);
Status InternalError(std::string message);

// A value of T, or the Status saying why there is none. Constructing a Result
// from an OK Status is a bug and yields an internal error.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status)                         // NOLINT(google-explicit-constructor)
      : data_(status.ok() ? InternalError("Result constructed from an OK status")
                          : std::move(status)) {}

  bool ok() const { return std::holds_alternative<T>(data_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(data_);
  }

  T& value() & {
    assert(ok());
    return std::get<T>(data_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<T>(data_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(data_));
  }
  T value_or(T fallback) const& { return ok() ? std::get<T>(data_) : std::move(fallback); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace skyslurm

#define SKY_STATUS_CONCAT_INNER_(a, b) a##b
#define SKY_STATUS_CONCAT_(a, b) SKY_STATUS_CONCAT_INNER_(a, b)

// Returns the Status of `expr` from the enclosing function when it is not OK.
#define SKY_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::skyslurm::Status sky_status_ = (expr);   \
    if (!sky_status_.ok()) return sky_status_; \
  } while (false)

// `lhs = value of expr` (a Result), or return its Status.
#define SKY_ASSIGN_OR_RETURN(lhs, expr) \
  SKY_ASSIGN_OR_RETURN_IMPL_(SKY_STATUS_CONCAT_(sky_result_, __LINE__), lhs, expr)
#define SKY_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()
