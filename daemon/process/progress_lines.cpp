#include "process/progress_lines.h"

namespace echomq::daemon {

void ProgressLines::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    const std::size_t nl = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, nl);
    if (!cut_) {
      line_.append(piece.substr(0, kMaxLine - line_.size()));
      cut_ = line_.size() >= kMaxLine && piece.size() > 0;
    }
    if (nl == std::string_view::npos) return;
    flush();
    bytes.remove_prefix(nl + 1);
  }
}

void ProgressLines::finish() {
  if (!line_.empty()) flush();
}

void ProgressLines::flush() {
  if (!line_.empty() && line_.back() == '\r') line_.pop_back();
  if (report_ && !line_.empty()) report_(line_);
  line_.clear();
  cut_ = false;
}

}  // namespace echomq::daemon
