#include "claim_refusal.h"

#include <vector>

namespace echomq::daemon {

namespace {

// A key of the claim and the type emq/1 keeps there; absent is fine.
struct Kept {
  const std::string& key;
  const char* type;  // as TYPE says it
  const char* shown;
};

// The key of the claim that holds another type than emq/1 keeps there,
// named; the server's words alone when none does (or it cannot say).
ClaimRefusal wrong_type(Executor& x, const QueueKeys& q, const std::string& said) {
  // The stream last: a queue's sets, meta and the group block's shared
  // keys are claim's whatever its events, the stream only when it keeps
  // them.
  const std::vector<Kept> kept = {{q.pending, "zset", "sorted set"}, {q.active, "zset", "sorted set"},
                                  {q.delayed, "zset", "sorted set"}, {q.dead, "zset", "sorted set"},
                                  {q.meta, "hash", "hash"},          {q.rot, "list", "list"},
                                  {q.gidx, "zset", "sorted set"},    {q.gwait, "zset", "sorted set"},
                                  {q.groups, "hash", "hash"},        {q.events, "stream", "stream"}};
  std::vector<Command> types;
  for (const Kept& k : kept) types.push_back({"TYPE", k.key});
  std::vector<Reply> r;
  try {
    r = x.pipeline(types);
  } catch (const Error&) {
    r.clear();  // named without the key below
  }
  for (std::size_t i = 0; i < r.size() && i < kept.size(); ++i) {
    const std::string& type = r[i].str;
    if (r[i].is_error() || type == "none" || type == kept[i].type) continue;
    const Kept& k = kept[i];
    const std::string what = k.key + " is a " + k.shown + " again or gone";
    const std::string how = k.key == q.events
                                ? "look at it, then DEL it: the queue's events start afresh"
                                : "RENAME it aside to look at it, and put back in " + k.key + " what belongs there";
    return {k.key + " holds a " + type + ", not a " + k.shown, "a key holds another type", what + " (" + how + ")",
            what};
  }
  return {said, "a key holds another type",
          "its keys hold what emq/1 keeps there (TYPE of each emq:{" + q.queue + "}:* key names the odd one)",
          "its keys hold what emq/1 keeps there again", true};
}

}  // namespace

ClaimRefusal claim_refusal(Executor& x, const QueueKeys& keys, const Error& refused) {
  if (refused.code() == ReplyCode::EmqArg && refused.key() == keys.meta) {
    const std::string field = refused.detail().substr(keys.meta.size() + 1);
    if (field.rfind("paused_until ", 0) == 0) {
      return {refused.detail(), "its pause's end is broken",
              "its pause's end is mended (emq resume " + keys.queue + ", or emq pause " + keys.queue + " again)",
              "its pause is mended"};
    }
    return {refused.detail(), "its limits are broken", "its limits are mended (emq limit " + keys.queue + ")",
            "its limits hold again"};
  }
  if (refused.code() == ReplyCode::WrongType) return wrong_type(x, keys, refused.what());
  return {refused.what(), "its claims are refused", "the server takes its claims again",
          "its claims are answered again"};
}

}  // namespace echomq::daemon
