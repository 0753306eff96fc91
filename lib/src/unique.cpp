#include "echomq/unique.h"

#include "echomq/errors.h"

namespace echomq {

namespace {
// The states a holder covers its key in, by its own mode.
bool covers(const std::string& mode, const std::string& state) {
  return state == "pending" || state == "delayed" || state == "waiting" || (state == "active" && mode != "started");
}
}  // namespace

UniqueLock read_unique_lock(Executor& x, const QueueKeys& q, std::string_view key) {
  UniqueLock out;
  out.key = std::string(key);
  const std::string lock = q.uniq(key);
  std::vector<Reply> r = x.pipeline({{"TYPE", lock}, {"GET", lock}, {"PTTL", lock}});
  for (const Reply& e : r) {
    if (e.is_error() && e.str.rfind("WRONGTYPE", 0) != 0) throw error_from_reply("unique", e.str);
  }
  if (r[0].str != "string" || r[1].type != Reply::Type::String) return out;
  out.points_at = r[1].str;
  out.window_left_ms = r[2].type == Reply::Type::Integer && r[2].integer >= 0 ? r[2].integer : -1;
  if (out.points_at.rfind("JOB", 0) != 0) return out;  // the wire's gate: not a holder
  const std::string row = q.row_root + out.points_at;
  std::vector<Reply> f = x.pipeline({{"TYPE", row}, {"HMGET", row, "state", "unique", "unique_mode"}});
  const bool hash = f[0].str == "hash" && f[1].type == Reply::Type::Array && f[1].elements.size() == 3;
  out.holder_state = hash ? f[1].elements[0].str : "gone";
  if (out.holder_state.empty()) out.holder_state = "gone";
  out.holder_mode = hash ? f[1].elements[2].str : "";
  out.held =
      out.window_left_ms >= 0 || (hash && f[1].elements[1].str == key && covers(out.holder_mode, out.holder_state));
  return out;
}

std::string describe(const UniqueLock& l) {
  if (l.held) {
    std::string text = "held by " + l.points_at + " (" + l.holder_state + ")";
    if (l.window_left_ms >= 0) text += ", a window with " + std::to_string(l.window_left_ms) + " ms left";
    return text;
  }
  if (l.points_at.empty()) return "free";
  return "free: the lock points at " + l.points_at + ", which " +
         (l.holder_state == "gone" ? std::string("is gone") : "is " + l.holder_state) +
         " (a stale pointer the next enqueue takes over)";
}

}  // namespace echomq
