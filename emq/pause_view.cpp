#include "pause_view.h"

#include "output.h"

namespace echomq::cli {

std::string describe_pause(const QueueStats& s, std::int64_t now_ms) {
  if (!s.paused) return "";
  const PauseInfo& p = s.pause;
  std::string text = p.by.empty() ? "by someone who did not say" : "by " + p.by;
  if (!p.reason.empty()) text += " (" + p.reason + ")";
  if (p.broken_until) {
    return text + "; its end paused_until '" + *p.broken_until +
           "' is broken, so claims are refused: resume the queue, or pause it again";
  }
  if (!p.until_ms) return text + ", until resumed";
  if (*p.until_ms <= now_ms) return text + ", ended " + iso_time(*p.until_ms) + " (lifted at the next claim)";
  return text + ", until " + iso_time(*p.until_ms);
}

nlohmann::ordered_json pause_json(const QueueStats& s, std::int64_t now_ms) {
  using json = nlohmann::ordered_json;
  if (!s.paused) return nullptr;
  const PauseInfo& p = s.pause;
  const auto text = [](const std::string& v) { return v.empty() ? json(nullptr) : json(v); };
  return {{"by", text(p.by)},
          {"reason", text(p.reason)},
          {"until_ms", p.until_ms ? json(*p.until_ms) : json(nullptr)},
          {"ended", p.until_ms && *p.until_ms <= now_ms},
          {"broken_until", p.broken_until ? json(*p.broken_until) : json(nullptr)}};
}

}  // namespace echomq::cli
