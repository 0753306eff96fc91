// libFuzzer target: emqd's configuration loader on any bytes. The loader
// reads a file (it resolves paths next to it), so each input is written to
// one scratch file first. A refusal (ConfigError) is the expected answer to
// most inputs; anything else escaping, or a crash, is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "config/config.h"

namespace {
std::string scratch_path() {
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp && *tmp ? tmp : "/tmp") + "/emq-config-fuzz-" + std::to_string(::getpid()) + ".yaml";
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = scratch_path();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    echomq::daemon::Config c = echomq::daemon::load_config(path);
    // A configuration that loads must also describe itself.
    (void)echomq::daemon::describe(c);
  } catch (const echomq::daemon::ConfigError& e) {
    if (e.errors().empty()) __builtin_trap();  // a refusal must say why
  }
  return 0;
}
