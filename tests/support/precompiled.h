// The headers every test includes, precompiled once per build tree and
// shared by every test target (tests/CMakeLists.txt: skyslurm_test_pch):
// GoogleTest and GoogleMock alone cost about 2 s of parsing per test file,
// which is most of a CI build on two cores.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>
