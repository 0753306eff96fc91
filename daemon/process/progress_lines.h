// What an exec handler writes to EMQ_PROGRESS_FD (3): each line one report
// of how far its job got. A line is cut to the 1024 bytes a report may
// hold (the rest of it up to its newline is dropped), so a handler that
// never writes a newline cannot grow a buffer without bound.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace echomq::daemon {

class ProgressLines {
 public:
  using Report = std::function<void(std::string_view)>;
  static constexpr std::size_t kMaxLine = 1024;

  explicit ProgressLines(Report report) : report_(std::move(report)) {}
  // Bytes as read from the pipe; each complete line is reported at once.
  void feed(std::string_view bytes);
  // At EOF: reports what is left of an unterminated last line.
  void finish();

 private:
  void flush();

  Report report_;
  std::string line_;
  bool cut_ = false;  // past kMaxLine: dropping up to the next newline
};

}  // namespace echomq::daemon
