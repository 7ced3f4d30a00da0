// The dashboard's jobs table (GET /v1/table): every job of the user's on
// every cluster and every sky job, one row each (an array one row with its
// tasks counted by state), filtered, sorted and paged here so that a page
// of 50 rows out of 10,000 is all a browser receives. Pure.
#pragma once

#include <cstdint>
#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "broker/util/status.h"

namespace skyslurm::daemon {

struct TableRow {
  std::string key;  // the sky id, else cluster:id
  std::string sky_id;
  std::string cluster;
  std::string native_id;
  std::string job_id;  // the global id ("" when none)
  std::string name;
  std::string user;
  std::string state;
  std::string reason;
  std::string gres;       // "h100:8" ("" when not known)
  std::int64_t gpus = 0;  // in all, every task's
  std::int64_t wait = 0;  // seconds waited so far (still pending) or before it started
  std::time_t since = 0;  // submitted (pending) or started
  std::map<std::string, std::int64_t> tasks;  // an array's tasks by state
};

struct TableQuery {
  std::size_t offset = 0;
  std::size_t limit = 50;
  std::string sort = "wait";  // id, name, cluster, state, gpus, wait, reason
  bool descending = true;
  std::string state;    // "" = any; an array matches when any task has it
  std::string cluster;  // "" = any
  std::string text;     // "" = any; in name, ids, user or reason, any case
};

struct TablePage {
  std::size_t total = 0;                       // rows matching
  std::size_t all = 0;                         // rows before filtering
  std::map<std::string, std::int64_t> states;  // over all rows
  std::vector<std::string> clusters;           // over all rows, sorted
  std::vector<TableRow> rows;                  // the page
};

// The query from a request's parameters; an unknown sort key, order or a
// limit outside 1..500 is an error naming it.
Result<TableQuery> ParseTableQuery(const std::map<std::string, std::string>& params);

TablePage QueryTable(std::vector<TableRow> rows, const TableQuery& query);

}  // namespace skyslurm::daemon
