#include "broker/job/global_id.h"

#include <algorithm>
#include <charconv>
#include <set>

namespace skyslurm {

std::optional<std::uint64_t> EncodeGlobalId(int index, std::string_view local_id) {
  if (index < 1 || index > kMaxClusterIndex || local_id.empty()) return std::nullopt;
  std::uint64_t local = 0;
  const auto [end, ec] = std::from_chars(local_id.data(), local_id.data() + local_id.size(), local);
  if (ec != std::errc() || end != local_id.data() + local_id.size()) return std::nullopt;
  if (local == 0 || local >= kLocalIdLimit) return std::nullopt;
  return (static_cast<std::uint64_t>(index) << kGlobalIdShift) | local;
}

DecodedId DecodeGlobalId(std::uint64_t id) {
  if (id < kLocalIdLimit) return {};
  const std::uint64_t index = id >> kGlobalIdShift;
  if (index > static_cast<std::uint64_t>(kMaxClusterIndex)) return {};
  return {static_cast<int>(index), id & (kLocalIdLimit - 1)};
}

std::optional<JobIdWord> SplitJobIdWord(std::string_view word) {
  std::size_t digits = 0;
  while (digits < word.size() && word[digits] >= '0' && word[digits] <= '9') ++digits;
  if (digits == 0 || digits > 19) return std::nullopt;
  JobIdWord w;
  std::from_chars(word.data(), word.data() + digits, w.number);
  w.rest = std::string(word.substr(digits));
  return w;
}

bool IsGlobalIdWord(std::string_view word) {
  auto w = SplitJobIdWord(word);
  return w && DecodeGlobalId(w->number).index != 0;
}

int DefaultClusterIndex(std::string_view name) {
  std::uint32_t h = 2166136261u;
  for (const char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return static_cast<int>(h % kMaxClusterIndex) + 1;
}

std::map<std::string, int> ClusterIndices(const std::vector<std::string>& names,
                                          const std::map<std::string, int>& pinned) {
  std::map<std::string, int> out;
  std::set<int> taken;
  for (const auto& [name, index] : pinned) {
    if (index < 1 || index > kMaxClusterIndex || taken.contains(index)) continue;
    out[name] = index;
    taken.insert(index);
  }
  std::vector<std::string> rest;
  for (const auto& n : names) {
    if (!out.contains(n)) rest.push_back(n);
  }
  std::sort(rest.begin(), rest.end());
  rest.erase(std::unique(rest.begin(), rest.end()), rest.end());
  for (const auto& n : rest) {
    if (taken.size() >= static_cast<std::size_t>(kMaxClusterIndex)) break;
    int slot = DefaultClusterIndex(n);
    while (taken.contains(slot)) slot = slot % kMaxClusterIndex + 1;
    out[n] = slot;
    taken.insert(slot);
  }
  return out;
}

}  // namespace skyslurm
