#include "group_change.h"

#include "echomq/errors.h"
#include "echomq/transitions.h"
#include "echomq/whole_number.h"
#include "bytes_text.h"

namespace echomq::cli {

std::int64_t weight_of(const std::string& text, const std::string& field) {
  if (std::optional<std::int64_t> n = server_integer_in(text, 1, kMaxGroupWeight)) return *n;
  throw Error(ErrorKind::Invalid, field,
              "expected 1..1000 (claims per turn of the rotation), got '" + text_cell(text, 40) + "'");
}

GroupWritten change_group(Executor& x, const QueueKeys& q, const std::string& group, const GroupChange& change) {
  const bool fallback = group == "*";
  if (!fallback) check_group_name(group);
  if (fallback && change.paused.value_or(false)) {
    throw Error(ErrorKind::Invalid, "group",
                "the default policy * cannot be paused: pause each group (emq group pause QUEUE GROUP) or the queue "
                "(emq pause QUEUE)");
  }
  const std::vector<Reply> r = x.pipeline({{"HGET", q.groups, group}, {"HGET", q.groups, "*"}});
  for (const Reply& e : r) {
    if (e.is_error()) throw error_from_reply("group", e.str);
  }
  const std::string default_text = r[1].type == Reply::Type::String ? r[1].str : "";
  const bool had_own = !fallback && r[0].type == Reply::Type::String;
  GroupWritten out;
  const std::optional<GroupPolicy> was = parse_group_policy(had_own ? r[0].str : default_text, &out.was_broken);
  out.before = was.value_or(GroupPolicy{});
  const std::optional<GroupPolicy> by_default = parse_group_policy(default_text);

  GroupPolicy now = change.reset ? by_default.value_or(GroupPolicy{}) : out.before;
  if (change.reset && fallback) now = GroupPolicy{};
  if (change.weight) now.weight = *change.weight;
  if (change.max_active) now.max_active = *change.max_active;
  if (change.rate) now.rate = *change.rate;
  if (change.paused) now.paused = *change.paused;
  out.now = now;

  // Back to the default when asked, or when a resume leaves exactly it.
  const bool to_default = !fallback && (change.reset || (change.paused == false && by_default && now == *by_default &&
                                                         !change.weight && !change.max_active && !change.rate));
  std::string text;
  if (!to_default) {
    text = policy_text(now);
    // "" would delete a group's own field: say its defaults instead.
    if (!fallback && text.empty()) text = "weight=1";
  }
  out.own = !fallback && !to_default;
  out.text = text;
  out.in_rotation = group_set(x, q, group, text);
  return out;
}

}  // namespace echomq::cli
