// ASCII lower case, for names that are case-blind by rule: YAML keys
// compared for advice, HTTP header names, host names. Bytes past ASCII are
// left alone (std::tolower in the "C" locale).
#pragma once

#include <algorithm>
#include <cctype>
#include <string>

namespace echomq::daemon {

inline std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace echomq::daemon
