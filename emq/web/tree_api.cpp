#include "web/tree_api.h"

#include "echomq/flow_tools.h"
#include "bytes_text.h"

namespace echomq::cli {

namespace {

using json = nlohmann::ordered_json;

// What of a child's result or error the tree shows: its head, the whole
// on the child's own page.
constexpr std::size_t kHeadBytes = 200;

const char* cut_name(FlowCut c) {
  switch (c) {
    case FlowCut::Depth: return "depth";
    case FlowCut::Repeat: return "repeat";
    case FlowCut::Nodes: return "nodes";
    case FlowCut::None: break;
  }
  return nullptr;
}

struct Count {
  std::size_t read = 0;
  std::size_t cut = 0;
};

json node_json(const FlowView& v, Count& n) {
  json o = {{"queue", v.queue}};
  put_text(o, "id", v.id);
  if (const char* cut = cut_name(v.cut)) {
    o["cut"] = cut;
    ++n.cut;
    return o;
  }
  ++n.read;
  o["state"] = v.found ? json(v.state) : json(nullptr);
  o["result"] = v.result ? shown_bytes(*v.result, kHeadBytes) : json(nullptr);
  o["error"] = v.error ? shown_bytes(*v.error, kHeadBytes) : json(nullptr);
  json children = json::array();
  for (std::size_t i = 0; i < v.children.size(); ++i) {
    json c = node_json(v.children[i], n);
    c["awaited"] = static_cast<bool>(v.awaited[i]);
    c["told"] = v.recorded[i] ? json(to_string(v.recorded[i]->outcome)) : json(nullptr);
    children.push_back(std::move(c));
  }
  o["children"] = std::move(children);
  return o;
}

}  // namespace

json flow_tree_json(Executor& x, const QueueKeys& q, const std::string& id) {
  Count n;
  json root = node_json(read_flow(x, q, id, kTreeDepth, kTreeNodes), n);
  return {{"nodes", n.read}, {"cut", n.cut}, {"root", std::move(root)}};
}

}  // namespace echomq::cli
