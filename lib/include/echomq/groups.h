// A queue's groups (docs/protocol.md, "Groups"): their policies as text, and
// what `emq groups`, the page and the metrics read of them. Plain commands,
// pipelined; the writes go through group_set (transitions.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "echomq/limits.h"

namespace echomq {

// The ranges group_set takes.
constexpr std::int64_t kMaxGroupWeight = 1000;

struct GroupPolicy {
  std::int64_t weight = 1;                 // claims per turn, 1..1000
  std::optional<std::int64_t> max_active;  // 1..1,000,000
  std::optional<RateLimit> rate;
  bool paused = false;
  bool operator==(const GroupPolicy& o) const {
    return weight == o.weight && max_active == o.max_active && rate == o.rate && paused == o.paused;
  }
  bool operator!=(const GroupPolicy& o) const { return !(*this == o); }
};

// Policy text as group_set takes it; nullopt with group_set's words
// ("weight must be an integer in 1..1000") in *why when it is not one.
std::optional<GroupPolicy> parse_group_policy(std::string_view text, std::string* why = nullptr);
// The text group_set is given for p: its fields in one order, defaults
// left out, so all defaults is "".
std::string policy_text(const GroupPolicy& p);
// "weight 3, max_active 10, rate 100/1000ms, paused", for a person.
std::string describe(const GroupPolicy& p);

// Where a group stands towards claim.
enum class GroupPlace {
  Rotation,  // in the rotation: served in its turn
  Capped,    // out until one of its jobs ends (at max_active)
  NoTokens,  // out until its rate's next token
  Out,       // paused, broken policy, or nothing pending
};
std::string_view place_name(GroupPlace p);  // "rotation", "capped", "no tokens", "out"

struct GroupState {
  std::string name;
  std::int64_t pending = 0;  // its gidx count
  std::int64_t active = 0;   // its counted leases (gact's size)
  // Its own policy text; nullopt when it runs by the default's.
  std::optional<std::string> own_policy;
  // The policy it runs by (its own, else the default); nullopt when broken,
  // with why in `broken`: claim serves none of its jobs then.
  std::optional<GroupPolicy> policy;
  std::string broken;
  GroupPlace place = GroupPlace::Out;
  // Its turn in the rotation, 1 the head, when in it and among the first
  // kTurnsLooked members; nullopt otherwise.
  std::optional<std::int64_t> turn;
  // False for a group listed for its own policy alone: it holds no keys
  // (nothing pending, nothing counted), as a group paused or set before
  // its first job.
  bool holds_keys = true;
};

// A rotation longer than this is not searched for a group's turn: the read
// stays bounded however many groups a queue has.
constexpr std::int64_t kTurnsLooked = 10000;
// A queue with more policies of its own groups than this does not list
// those that hold no keys (their names are not read): the read stays bounded.
constexpr std::int64_t kPoliciesLooked = 10000;

struct GroupsView {
  std::int64_t groups = 0;           // groups holding keys
  std::int64_t grouped_pending = 0;  // their jobs pending, all groups
  std::int64_t rotation = 0;         // members of the rotation, * included
  std::string default_policy;        // the * field, "" for all defaults
  std::int64_t policies = 0;         // groups with a policy of their own, holding keys or not (0: not read)
  std::vector<GroupState> top;       // the largest backlogs first
  bool more = false;                 // groups left out of top (past the limit, or not looked at)
};

// The queue's groups: the `limit` that hold keys with the largest backlogs
// (ties in ZREVRANGE's order, names descending), then, while there is room,
// those with a policy of their own that hold no keys (names descending,
// 0 pending and active: a group paused or set before it has jobs), each
// with its count, policy and place. Two round trips whatever the number of
// groups; a third (HKEYS of the policies) only when fewer than `limit`
// groups hold keys and the queue has policies of its own, at most
// kPoliciesLooked of them.
// IdleGroups::Left reads the groups holding keys alone, and not the policy
// hash's size or names: the metrics' view, which the daemon's
// least-privilege ACL (docs/production.md) grants without HLEN and HKEYS.
enum class IdleGroups { Listed, Left };
GroupsView read_groups(Executor& x, const QueueKeys& q, std::size_t limit, IdleGroups idle = IdleGroups::Listed);
// One group, as read_groups reads each (a group holding no keys reads as
// 0 pending, 0 active, out). Throws Error{Invalid} for a bad name.
GroupState read_group(Executor& x, const QueueKeys& q, std::string_view group);
// Up to `limit` of the group's pending ids from `offset`, in claim order.
std::vector<std::string> group_pending_ids(Executor& x, const QueueKeys& q, std::string_view group, std::int64_t offset,
                                           std::int64_t limit);

}  // namespace echomq
