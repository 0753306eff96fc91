// Prints config_fuzz's dictionary (config_dictionary.h) to stdout.
#include <cstdio>

#include "config_dictionary.h"

int main() {
  const std::string text = echomq::daemon::config_dictionary();
  return std::fwrite(text.data(), 1, text.size(), stdout) == text.size() ? 0 : 1;
}
