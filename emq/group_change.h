// A group's policy changed from the text forms a person writes and written
// through group_set: what `emq group set|pause|resume` do, and what the
// page's group form can do, so a value one refuses the other refuses with
// the same words.
#pragma once

#include <optional>
#include <string>

#include "echomq/executor.h"
#include "echomq/groups.h"
#include "echomq/keyspace.h"

namespace echomq::cli {

// "N", 1..1000. Throws Error{Invalid} whose op is `field`, as
// max_active_of (limit_change.h) does.
std::int64_t weight_of(const std::string& text, const std::string& field);

// What to change: an outer nullopt leaves the field as it is; an inner one
// turns it off.
struct GroupChange {
  std::optional<std::int64_t> weight;
  std::optional<std::optional<std::int64_t>> max_active;
  std::optional<std::optional<RateLimit>> rate;
  std::optional<bool> paused;
  bool reset = false;  // delete the group's own policy: it runs by the default
};

struct GroupWritten {
  GroupPolicy before;        // what it ran by
  GroupPolicy now;           // what it runs by
  bool own = false;          // now by a policy of its own (false: the default's)
  std::string text;          // the policy text group_set was given ("": none of its own)
  bool in_rotation = false;  // group_set's reply
  std::string was_broken;    // why the policy read was broken, "" when not
};

// Reads the policy the group runs by (its own, else the default; for `*`
// the default), applies the change, writes it with group_set. A group's
// own policy replaces the default whole, so the merge starts from what the
// group runs by: a change of its weight keeps the default's cap it had.
// Resuming a group whose policy is then the default's deletes its own.
// Throws Error{Invalid} for a bad group, or the default paused.
GroupWritten change_group(Executor& x, const QueueKeys& q, const std::string& group, const GroupChange& change);

}  // namespace echomq::cli
