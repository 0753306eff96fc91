// emq's precompiled header (EMQ_PCH, CMakeLists.txt): nlohmann/json, which
// most of emq's units parse, parsed once. Not CLI11: its header defines
// objects (the validators) that every unit including it constructs and
// compiles again, 7 s a unit at -O2, so only the units that need it pay.
// Third-party and standard headers only: a unit still includes what it
// uses, and compiles the same without this.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>
