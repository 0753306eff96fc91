// The tests' precompiled header (EMQ_PCH, tests/CMakeLists.txt): GoogleTest
// and GoogleMock, which every test unit parses, parsed once for all the
// test programs. Third-party and standard headers only: a unit still
// includes what it uses, and compiles the same without this.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>
