// The libFuzzer dictionary for config_fuzz, made from the schema table
// (daemon/config/config_schema.cpp) so that a new key needs no second list:
// every key as `"name:"`, every word a key takes, and the YAML and URL
// tokens that reach the loader's other branches.
#pragma once

#include <string>

namespace echomq::daemon {

// The dictionary file's text, in libFuzzer's format: one "token" a line.
std::string config_dictionary();

}  // namespace echomq::daemon
