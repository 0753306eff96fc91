// A queue's groups on the page (docs/web.md, "Groups"): the largest
// backlogs with their counts, policies and places (groups.h, read_groups),
// one group with a page of its pending jobs, and the group actions (pause,
// resume, weight and caps), made by change_group as `emq group` makes them.
// The caller has checked the token, the origin and --read-only for the
// actions.
#pragma once

#include <cstdint>
#include <string>

#include "echomq/executor.h"
#include "web/api.h"

namespace echomq::cli {

// Groups a queue's view lists unless ?limit= asks for up to kMaxGroupsShown.
inline constexpr std::int64_t kGroupsShown = 20;
inline constexpr std::int64_t kMaxGroupsShown = 100;

// GET /api/queues/Q/groups?limit=N
ApiAnswer groups_answer(Executor& x, const std::string& queue, const std::string& limit);
// GET /api/queues/Q/groups/G?page=N: the group, and its pending jobs in
// claim order, WebApi::kPageSize a page, listed as a queue's page lists them.
ApiAnswer group_answer(Executor& x, const std::string& queue, const std::string& group, const std::string& page);

// What a POST asks of a group: pause, resume, or new values ("" leaves one
// as it is) for weight (1..1000), max_active (N or off), rate (N/PERIOD or off).
struct GroupForm {
  std::string action;  // "pause", "resume" or "policy"
  std::string weight, max_active, rate;
};
// POST /api/queues/Q/groups/G/{pause,resume,policy}, made as `emq group`
// makes it (group_change.h): the same merge, the same words for a bad value.
ApiAnswer group_action(Executor& x, const std::string& queue, const std::string& group, const GroupForm& form);

}  // namespace echomq::cli
