#include "process/stderr_lines.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

namespace echomq::daemon {

StderrLines::StderrLines(std::string queue, std::string source, std::string source_key)
    : queue_(std::move(queue)), source_(std::move(source)), source_key_(std::move(source_key)) {}

void StderrLines::feed(std::string_view bytes) {
  if (bytes.size() >= kTailBytes) {
    tail_.assign(bytes.substr(bytes.size() - kTailBytes));
  } else {
    tail_.append(bytes);
    // Trimmed only once it is twice the size, so a trickle of small reads
    // does not move 4 KiB each time.
    if (tail_.size() > 2 * kTailBytes) tail_.erase(0, tail_.size() - kTailBytes);
  }

  while (!bytes.empty()) {
    const std::size_t newline = bytes.find('\n');
    const bool ends_line = newline != std::string_view::npos;
    append_piece(bytes.substr(0, ends_line ? newline : bytes.size()));
    bytes.remove_prefix(ends_line ? newline + 1 : bytes.size());
    if (ends_line) {
      log_line(partial_);
      partial_.clear();
    }
  }
}

// partial_ never holds more than kMaxLine: a full one is logged as a piece
// when more of the same line arrives (not before, so a line of exactly
// kMaxLine is still logged as one line when its newline comes).
void StderrLines::append_piece(std::string_view piece) {
  while (!piece.empty()) {
    const std::size_t room = kMaxLine - partial_.size();
    if (room == 0) {
      log_line(partial_);
      partial_.clear();
      continue;
    }
    const std::size_t n = std::min(room, piece.size());
    partial_.append(piece.substr(0, n));
    piece.remove_prefix(n);
  }
}

void StderrLines::finish() {
  if (!partial_.empty()) log_line(partial_);
  partial_.clear();
}

std::string StderrLines::tail() const {
  std::string_view view(tail_);
  if (view.size() > kTailBytes) view.remove_prefix(view.size() - kTailBytes);
  std::size_t end = view.find_last_not_of(" \t\r\n");
  return std::string(view.substr(0, end == std::string_view::npos ? 0 : end + 1));
}

void StderrLines::log_line(std::string_view line) const {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  spdlog::info("queue={} {}={} stderr: {}", queue_, source_key_, source_, line);
}

}  // namespace echomq::daemon
