// The headers most of the broker's ~110 files include, precompiled once per
// build tree (broker/CMakeLists.txt): parsing them is about an eighth of
// each file's compile time, and every CI run builds the broker in five trees
// (plain, ASan, fuzz, .deb, .rpm) on two cores. Only what the library's own
// interface already exposes (the standard library, fmt, jsoncpp); a file
// still includes what it uses: this only spares the parsing.
#pragma once

#include <fmt/format.h>
#include <json/json.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
