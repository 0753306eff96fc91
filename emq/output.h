// What emq prints and how it ends: the exit codes scripts rely on, messages
// on stderr, aligned tables and times on stdout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace echomq::cli {

// The exit codes are an interface (docs/cli.md): never renumber them.
enum ExitCode : int {
  kExitOk = 0,
  kExitNotFound = 1,  // no such job (inspect, cancel, dead retry|delete ID), a job that died (wait), a daemon
                      // not alive (daemons quiet|stop), no at a prompt
  kExitUsage = 2,     // bad arguments, queue name, job id, lane, time or URL; purge without --yes off a terminal
  kExitServer = 3,    // server unreachable, login refused, or a server error
  kExitRunning = 4,   // refused: the job is running (cancel), the queue still holds jobs (forget), a unique
                      // key held (enqueue --strict)
  kExitTimeout = 5,   // wait: the job had not ended when --timeout ran out; daemons quiet|stop: no answer in time
};

// One line on stderr, prefixed "emq: ", through terminal_text: a message
// may quote what the server holds or answered.
void say(const std::string& message);
// Says that the job has no row, and why a finished one may have none.
void say_no_job(const std::string& queue, const std::string& id);

// Epoch milliseconds as UTC ISO 8601: 2024-05-01T12:00:00.123Z.
std::string iso_time(std::int64_t epoch_ms);

// A plain text table with a header row; columns are padded to their widest
// cell, numbers (right-aligned columns) line up on their last digit. Every
// cell is shown through terminal_cell (bytes_text.h): escaped and cut to its
// column's width, so no value another writer put on the server can act on
// the terminal, break a line, or pad every line of the table to its length.
class Table {
 public:
  // Wide enough for a job id (JOB_ and 128 bytes) as it is.
  static constexpr std::size_t kCellChars = 140;
  struct Column {
    std::string name;
    bool right_aligned = false;
    std::size_t max_chars = kCellChars;
  };
  explicit Table(std::vector<Column> columns);
  void add(std::vector<std::string> cells);
  void print(std::ostream& out) const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace echomq::cli
