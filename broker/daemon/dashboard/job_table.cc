#include "broker/daemon/dashboard/job_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <tuple>

#include "broker/util/strings.h"

namespace skyslurm::daemon {
namespace {

const std::set<std::string>& SortKeys() {
  static const std::set<std::string> keys = {"id",   "name", "cluster", "state",
                                             "gpus", "wait", "reason"};
  return keys;
}

bool Contains(const std::string& haystack, const std::string& lowered_needle) {
  return Lower(haystack).find(lowered_needle) != std::string::npos;
}

Result<std::size_t> Number(const std::string& name, const std::string& text) {
  std::size_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return InvalidArgumentError(fmt::format("'{}' must be a number, not '{}'", name, text));
  }
  return v;
}

// Ids in order: numbers (Slurm's) by value before anything else (a spread
// array's "34,21"), that by text; the key breaks ties. One key per row, so
// the order is a strict weak one whatever the mix.
std::tuple<bool, std::uint64_t, std::string_view, std::string_view> IdKey(const TableRow& r) {
  const std::string& id = r.job_id.empty() ? r.native_id : r.job_id;
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), n);
  const bool number = !id.empty() && ec == std::errc() && end == id.data() + id.size();
  return {!number, number ? n : 0, number ? std::string_view() : std::string_view(id), r.key};
}

// A spread array's row names its parts' clusters: "alpha,beta".
bool OnCluster(const TableRow& r, const std::string& cluster) {
  if (r.cluster == cluster) return true;
  const std::vector<std::string> parts = SplitList(r.cluster);
  return std::find(parts.begin(), parts.end(), cluster) != parts.end();
}

bool Matches(const TableRow& r, const TableQuery& q, const std::string& text) {
  if (!q.cluster.empty() && !OnCluster(r, q.cluster)) return false;
  if (!q.state.empty() && r.state != q.state && !r.tasks.contains(q.state)) return false;
  if (text.empty()) return true;
  for (const std::string* field :
       {&r.name, &r.key, &r.native_id, &r.job_id, &r.user, &r.reason, &r.cluster}) {
    if (Contains(*field, text)) return true;
  }
  return false;
}

}  // namespace

Result<TableQuery> ParseTableQuery(const std::map<std::string, std::string>& params) {
  TableQuery q;
  auto get = [&](const char* name) -> const std::string* {
    auto it = params.find(name);
    return it == params.end() ? nullptr : &it->second;
  };
  if (const std::string* v = get("offset")) {
    SKY_ASSIGN_OR_RETURN(q.offset, Number("offset", *v));
  }
  if (const std::string* v = get("limit")) {
    SKY_ASSIGN_OR_RETURN(q.limit, Number("limit", *v));
    if (q.limit < 1 || q.limit > 500) {
      return InvalidArgumentError(fmt::format("'limit' must be 1 to 500, not {}", q.limit));
    }
  }
  if (const std::string* v = get("sort"); v != nullptr && !v->empty()) {
    if (!SortKeys().contains(*v)) {
      return InvalidArgumentError(fmt::format(
          "'sort' must be id, name, cluster, state, gpus, wait or reason, not '{}'", *v));
    }
    q.sort = *v;
  }
  if (const std::string* v = get("order"); v != nullptr && !v->empty()) {
    if (*v != "asc" && *v != "desc") {
      return InvalidArgumentError(fmt::format("'order' must be asc or desc, not '{}'", *v));
    }
    q.descending = *v == "desc";
  }
  if (const std::string* v = get("state")) q.state = *v;
  if (const std::string* v = get("cluster")) q.cluster = *v;
  if (const std::string* v = get("q")) q.text = *v;
  return q;
}

TablePage QueryTable(std::vector<TableRow> rows, const TableQuery& q) {
  TablePage page;
  page.all = rows.size();
  std::set<std::string> clusters;
  for (const TableRow& r : rows) {
    for (std::string& c : SplitList(r.cluster)) clusters.insert(std::move(c));
    if (r.tasks.empty()) {
      ++page.states[r.state];
    } else {
      for (const auto& [state, n] : r.tasks) page.states[state] += n;
    }
  }
  page.clusters.assign(clusters.begin(), clusters.end());
  const std::string text = Lower(q.text);
  std::erase_if(rows, [&](const TableRow& r) { return !Matches(r, q, text); });
  page.total = rows.size();
  // Ascending by the column, the key breaking ties (a stable page order
  // while rows change between polls); descending is its reverse.
  auto less = [&](const TableRow& a, const TableRow& b) {
    if (q.sort == "id") return IdKey(a) < IdKey(b);
    auto by = [&](const auto& x, const auto& y) { return std::tie(x, a.key) < std::tie(y, b.key); };
    if (q.sort == "name") return by(a.name, b.name);
    if (q.sort == "cluster") return by(a.cluster, b.cluster);
    if (q.sort == "state") return by(a.state, b.state);
    if (q.sort == "gpus") return by(a.gpus, b.gpus);
    if (q.sort == "reason") return by(a.reason, b.reason);
    return by(a.wait, b.wait);
  };
  const std::size_t begin = std::min(q.offset, rows.size());
  const std::size_t end = std::min(rows.size(), begin + q.limit);
  // Only the page is put in order: a partial sort of 10,000 rows for 50.
  auto cmp = [&](const TableRow& a, const TableRow& b) {
    return q.descending ? less(b, a) : less(a, b);
  };
  std::partial_sort(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(end), rows.end(), cmp);
  page.rows.assign(std::make_move_iterator(rows.begin() + static_cast<std::ptrdiff_t>(begin)),
                   std::make_move_iterator(rows.begin() + static_cast<std::ptrdiff_t>(end)));
  return page;
}

}  // namespace skyslurm::daemon
