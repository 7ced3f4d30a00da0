#include "broker/job/sky_id.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <random>

namespace skyslurm {

std::string NewSkyId(std::time_t now) {
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::random_device rd;
  std::uniform_int_distribution<unsigned long long> dist(0, 0xFFFFFFFFFFFFULL);
  char buf[64];
  std::snprintf(buf, sizeof buf, "sky-%04d%02d%02d-%02d%02d%02d-%012llx", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, dist(rd));
  return buf;
}

bool LooksLikeSkyId(std::string_view id) {
  return id.starts_with("sky-") && id.size() <= 64 && std::all_of(id.begin(), id.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-';
         });
}

}  // namespace skyslurm
