#include "broker/job/array_indices.h"

#include <fmt/format.h>

#include <utility>

namespace skyslurm::job {
namespace {

constexpr std::int64_t kSaturated = std::int64_t{1} << 62;

// C's strtol, base 10, on a view: blanks and a sign, then digits. Reading no
// digit reads 0 and consumes nothing, as strtol does (slurmctld takes that
// for 0: "-" is the array 0-0). A value past any index saturates.
struct Number {
  std::int64_t value = 0;
  std::size_t end = 0;  // offset just past what was read
};
Number ReadLong(std::string_view text, std::size_t at) {
  std::size_t i = at;
  while (i < text.size() && (text[i] == ' ' || (text[i] >= '\t' && text[i] <= '\r'))) ++i;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  const std::size_t digits = i;
  std::int64_t v = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    v = v >= kSaturated / 10 ? kSaturated : v * 10 + (text[i] - '0');
    ++i;
  }
  if (i == digits) return {0, at};
  return {negative ? -v : v, i};
}

// Marks the element's indices in `marked` (a bitmap, as slurmctld keeps it:
// an index named twice is one task, and memory is bounded by the largest).
Status AddElement(std::string_view element, std::vector<bool>& marked) {
  auto bad = [&](std::string_view why) {
    return InvalidArgumentError(fmt::format(
        "'{}': {}; expected MIN, MIN-MAX or MIN-MAX:STEP (as 0-15:4), comma-separated, with an "
        "optional %LIMIT",
        element, why));
  };
  const Number min = ReadLong(element, 0);
  Number max = min;
  std::int64_t step = 1;
  std::size_t at = min.end;
  if (at < element.size() && element[at] == '-') {
    max = ReadLong(element, at + 1);
    at = max.end == at + 1 ? at + 1 : max.end;
    if (at < element.size() && element[at] == ':') {
      const Number s = ReadLong(element, at + 1);
      if (s.end == at + 1 || s.value <= 0) return bad("a step must be a number above 0");
      step = s.value;
      at = s.end;
    }
  }
  if (at != element.size()) return bad("unexpected text after the numbers");
  if (min.value < 0) return bad("an index cannot be negative");
  if (max.value < min.value) return bad("the range ends before it starts");
  if (max.value >= kLargestMaxArraySize) {
    return bad(fmt::format("an index must be below {} (Slurm's largest MaxArraySize)",
                           kLargestMaxArraySize));
  }
  const auto last = static_cast<std::size_t>(max.value);
  if (marked.size() <= last) marked.resize(last + 1);
  for (auto i = static_cast<std::size_t>(min.value); i <= last;
       i += static_cast<std::size_t>(step)) {
    marked[i] = true;
  }
  return OkStatus();
}

}  // namespace

Result<std::optional<ArrayIndices>> ParseArrayIndices(std::string_view text) {
  const std::size_t percent = text.find('%');
  const std::string_view list = text.substr(0, percent);
  ArrayIndices array;
  std::vector<bool> marked;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    const std::string_view element = list.substr(start, comma - start);
    if (!element.empty()) SKY_RETURN_IF_ERROR(AddElement(element, marked));
    start = comma + 1;
  }
  for (std::size_t i = 0; i < marked.size(); ++i) {
    if (marked[i]) array.indices.push_back(static_cast<std::int64_t>(i));
  }
  if (array.indices.empty()) {
    if (percent == std::string_view::npos) return std::optional<ArrayIndices>();
    array.indices.push_back(0);  // "%2": slurmctld stores index 0
  }
  if (percent != std::string_view::npos) {
    // Slurm keeps the limit in 32 bits; INFINITE and NO_VAL are no limit.
    const Number limit = ReadLong(text, percent + 1);
    if (limit.value > 0 && limit.value < 0xFFFFFFFE) array.throttle = limit.value;
  }
  return std::optional<ArrayIndices>(std::move(array));
}

std::string FormatArrayIndices(std::span<const std::int64_t> indices) {
  std::string out;
  for (std::size_t i = 0; i < indices.size();) {
    std::size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", indices[i]) : fmt::format("{}-{}", indices[i], indices[j]);
    i = j + 1;
  }
  return out;
}

std::string FormatArrayIndices(const ArrayIndices& array) {
  std::string out = FormatArrayIndices(array.indices);
  if (array.throttle) out += fmt::format("%{}", *array.throttle);
  return out;
}

}  // namespace skyslurm::job
