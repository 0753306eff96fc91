// A child's stderr, as the daemon treats it: each line logged at info with
// the queue and the job id, or another source such as a pool process's pid
// (lines longer than 4 KiB logged in 4 KiB
// pieces, so a handler that never writes a newline cannot grow a buffer
// without bound), and the last 4 KiB kept as the job's error text.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace echomq::daemon {

class StderrLines {
 public:
  static constexpr std::size_t kMaxLine = 4096;
  static constexpr std::size_t kTailBytes = 4096;

  // Lines are logged as "queue=QUEUE SOURCE_KEY=SOURCE stderr: LINE".
  StderrLines(std::string queue, std::string source, std::string source_key = "job");

  // Bytes as read from the pipe; complete lines are logged at once.
  void feed(std::string_view bytes);
  // At EOF: logs what is left of an unterminated last line.
  void finish();
  // The last kTailBytes of everything fed, without trailing whitespace.
  std::string tail() const;

 private:
  void append_piece(std::string_view piece);
  void log_line(std::string_view line) const;

  std::string queue_;
  std::string source_;
  std::string source_key_;
  std::string partial_;
  std::string tail_;
};

}  // namespace echomq::daemon
