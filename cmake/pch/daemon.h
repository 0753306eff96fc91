// The daemon's precompiled header (EMQ_PCH, CMakeLists.txt): what nearly
// every unit of daemon/ parses, parsed once a library instead of once a
// unit. Third-party and standard headers only: a unit still includes what
// it uses, and compiles the same without this.
#pragma once

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "fmt_extern.h"
