// A parent's whole tree for its job page (docs/web.md, "Flows"): every
// descendant as lib's read_flow finds it (one round trip per level, each
// key routed to its shard), bounded so a huge flow cannot stall the page.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "echomq/executor.h"
#include "echomq/keyspace.h"

namespace echomq::cli {

// The most jobs and levels one page reads of a tree; past them, the page
// says where it cut and `emq flow show` goes on.
inline constexpr std::size_t kTreeNodes = 1000;
inline constexpr int kTreeDepth = 64;

// {"nodes" (read), "cut" (how many listed but not read), "root": node},
// node = {"queue", "id", "state", "result", "error" (heads), "cut"
// ("depth", "repeat", "nodes" or absent), "told", "awaited", "children"}.
nlohmann::ordered_json flow_tree_json(Executor& x, const QueueKeys& q, const std::string& id);

}  // namespace echomq::cli
