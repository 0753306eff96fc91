// docs/production.md's unit for `emq web`, taken from the page, read as
// systemd reads it: `systemd-analyze verify` says nothing about it (it
// warns only, so its silence is the check) once its ExecStart names this
// build's emq, and it serves loopback only, as the page advises.
#include <gtest/gtest.h>

#include "doc_text.h"
#include "ops_files.h"

namespace echomq::test {
namespace {

TEST(ProductionDoc, TheEmqWebUnitVerifies) {
  ASSERT_FALSE(find_program("systemd-analyze").empty())
      << "systemd-analyze is not installed: run scripts/install-deps.sh (package systemd)";
  std::string unit =
      fenced_block((source_dir() / "docs/production.md").string(), "## Several hosts and a managed Valkey", "ini");
  const std::string installed = "ExecStart=/usr/local/bin/emq web ";
  const std::size_t at = unit.find(installed);
  ASSERT_NE(at, std::string::npos) << "the unit no longer runs " << installed << ":\n" << unit;
  EXPECT_EQ(unit.find("--listen 127.0.0.1:", at), at + installed.size()) << "a loopback --listen first:\n" << unit;
  unit.replace(at, installed.size() - 5, "ExecStart=" + std::string(EMQ_BIN_DIR) + "/emq");

  TempDir dir;
  const fs::path path = dir.path() / "emq-web.service";
  write_text(path, unit);
  const RunResult r = run_tool("systemd-analyze", {"verify", path.string()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out + r.err, "") << "systemd-analyze verify had something to say about:\n" << unit;
}

}  // namespace
}  // namespace echomq::test
