// emq flow enqueue FILE|- [--json]
// emq flow show QUEUE ID [--json]
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "echomq/bytes.h"
#include "echomq/errors.h"
#include "echomq/flows.h"
#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "bytes_text.h"
#include "output.h"
#include "tool.h"

namespace echomq::cli {

namespace {

using json = nlohmann::json;

// Text mode shows this much of a result or an error; --json shows all.
constexpr std::size_t kShownBytes = 200;
// How far down the tree show reads; where it stops, the line says how to
// go on.
constexpr int kShownDepth = 16;

struct FlowArgs {
  std::string file;
  std::string queue;
  std::string id;
  bool json = false;
};

// One node of the input tree, checked key by key; `at` names it in errors.
// Deeper than kMaxFlowDepth is refused here, before the rest is read.
FlowNode node_from(const json& j, std::vector<std::size_t>& at) {
  auto bad = [&](const std::string& what) {
    throw Error(ErrorKind::Invalid, "flow", flow_node_path(at) + ": " + what);
  };
  check_flow_depth(at);
  if (!j.is_object()) bad("expected a JSON object such as {\"queue\": \"q\", \"payload\": \"...\"}");
  for (const auto& [key, value] : j.items()) {
    if (key != "queue" && key != "payload" && key != "payload_b64" && key != "id" && key != "lane" &&
        key != "on_child_failure" && key != "children" && key != "group") {
      bad("unknown key \"" + key.substr(0, 40) +
          "\": use queue, payload or payload_b64, and id, lane, group, on_child_failure, children");
    }
  }
  FlowNode n;
  if (!j.contains("queue") || !j["queue"].is_string()) bad("\"queue\" (a string) is required");
  n.queue = j["queue"].get<std::string>();
  if (j.contains("payload") && j.contains("payload_b64")) bad("give \"payload\" or \"payload_b64\", not both");
  if (j.contains("payload")) {
    const json& p = j["payload"];
    n.payload = p.is_string() ? p.get<std::string>() : p.dump();
  } else if (j.contains("payload_b64")) {
    if (!j["payload_b64"].is_string() || !base64_decode(j["payload_b64"].get<std::string>(), n.payload)) {
      bad("\"payload_b64\" is not base64 (RFC 4648, standard alphabet, with padding)");
    }
  }
  if (j.contains("id")) {
    if (!j["id"].is_string()) bad("\"id\" must be a string JOB_...");
    n.id = j["id"].get<std::string>();
  }
  if (j.contains("lane")) {
    if (!j["lane"].is_number_integer()) bad("\"lane\" must be an integer in -1000..1000");
    const auto lane = j["lane"].get<std::int64_t>();
    if (lane < kMinLane || lane > kMaxLane) bad("\"lane\" must be an integer in -1000..1000");
    n.lane = static_cast<int>(lane);
  }
  // Its bytes are checked with the tree's (check_flow); "" would mean none.
  if (j.contains("group")) {
    if (!j["group"].is_string() || j["group"].get_ref<const std::string&>().empty())
      bad("\"group\" must be a string of 1-128 bytes of A-Z a-z 0-9 _ . : -");
    n.group = j["group"].get<std::string>();
  }
  if (j.contains("on_child_failure")) {
    if (!j["on_child_failure"].is_string()) bad("\"on_child_failure\" must be fail, wait or ignore");
    n.on_child_failure = j["on_child_failure"].get<std::string>();
  }
  if (j.contains("children")) {
    if (!j["children"].is_array()) bad("\"children\" must be an array of nodes");
    for (std::size_t i = 0; i < j["children"].size(); ++i) {
      at.push_back(i);
      n.children.push_back(node_from(j["children"][i], at));
      at.pop_back();
    }
  }
  return n;
}

FlowNode parse_tree(const std::string& text, const std::string& source) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(ErrorKind::Invalid, "flow", source + " is not JSON: " + std::string(e.what()).substr(0, 200));
  }
  std::vector<std::size_t> at;
  FlowNode root = node_from(j, at);
  check_flow(root);  // every node, before the server is asked anything
  return root;
}

void collect_queues(const FlowJob& job, std::vector<std::string>& out) {
  out.push_back(job.queue);
  for (const FlowJob& c : job.children) collect_queues(c, out);
}

void print_ids(const FlowJob& job, int depth) {
  std::cout << std::string(2 * depth, ' ') << job.id << ' ' << job.queue << '\n';
  if (job.result == EnqueueResult::Duplicate) {
    say("duplicate: " + job.id + " already exists in queue " + job.queue + "; nothing was changed");
  }
  for (const FlowJob& c : job.children) print_ids(c, depth + 1);
}

nlohmann::ordered_json ids_json(const FlowJob& job) {
  nlohmann::ordered_json o;
  o["queue"] = job.queue;
  o["id"] = job.id;
  o["duplicate"] = job.result == EnqueueResult::Duplicate;
  if (!job.children.empty()) {
    o["children"] = nlohmann::ordered_json::array();
    for (const FlowJob& c : job.children) o["children"].push_back(ids_json(c));
  }
  return o;
}

int run_enqueue_flow(Tool& tool, const FlowArgs& a) {
  const std::string source = a.file == "-" ? "stdin" : a.file;
  const FlowNode root =
      parse_tree(a.file == "-" ? read_stdin("the flow (JSON)") : read_file(a.file, "flow file"), source);
  Executor x(tool.options());
  FlowJob ids = enqueue_flow(x, root);
  std::vector<std::string> queues;
  collect_queues(ids, queues);
  register_queues(x, queues);
  if (a.json) {
    std::cout << ids_json(ids).dump() << '\n';
  } else {
    print_ids(ids, 0);
  }
  return kExitOk;
}

std::string outcome_text(const std::optional<ChildResult>& r) {
  if (!r) return "";
  std::string t = r->outcome == ChildOutcome::Completed ? "told: completed" : "told: dead";
  return t + " " + text_cell(r->text, kShownBytes);
}

// What stands for a job's state where show did not read it.
std::string cut_text(const FlowView& v) {
  if (v.cut == FlowCut::Repeat) return "(shown elsewhere in this tree; not followed again)";
  return "(cut: more than " + std::to_string(kShownDepth) + " levels down; emq flow show " + v.queue + " " + v.id +
         " goes on from here)";
}

void print_view(const FlowView& v, int depth, const std::optional<ChildResult>& recorded, bool awaited) {
  std::string line = std::string(2 * depth, ' ') + v.queue + ":" + v.id;
  if (v.cut == FlowCut::None) {
    line += "  " + (v.found ? v.state : std::string("(no row)"));
    if (v.found && v.result) line += "  result: " + text_cell(v.result, kShownBytes);
    if (v.found && v.error) line += "  error: " + text_cell(v.error, kShownBytes);
  }
  if (depth > 0) {
    if (recorded) line += "  [" + outcome_text(recorded) + "]";
    if (awaited) line += "  [awaited]";
  }
  if (v.cut != FlowCut::None) line += "  " + cut_text(v);
  if (!v.on_child_failure.empty()) line += "  on_child_failure=" + v.on_child_failure;
  std::cout << terminal_text(line) << '\n';
  for (std::size_t i = 0; i < v.children.size(); ++i) {
    print_view(v.children[i], depth + 1, v.recorded[i], v.awaited[i]);
  }
}

// Names, ids and states are shown as text, with their bytes in hex beside
// when another writer put bytes there that are not UTF-8 (put_text).
nlohmann::ordered_json view_json(const FlowView& v) {
  nlohmann::ordered_json o;
  o["queue"] = v.queue;
  put_text(o, "id", v.id);
  if (v.cut != FlowCut::None) {
    o["cut"] = v.cut == FlowCut::Depth ? "depth" : v.cut == FlowCut::Repeat ? "repeat" : "nodes";
    return o;
  }
  if (v.found) {
    put_text(o, "state", v.state);
  } else {
    o["state"] = nullptr;
  }
  put_bytes_or_null(o, "result", v.result ? std::optional<std::string_view>(*v.result) : std::nullopt);
  put_bytes_or_null(o, "error", v.error ? std::optional<std::string_view>(*v.error) : std::nullopt);
  if (!v.parent.empty()) put_text(o, "parent", v.parent);
  if (!v.on_child_failure.empty()) put_text(o, "on_child_failure", v.on_child_failure);
  if (v.children_enqueued > 0) o["children_enqueued"] = v.children_enqueued;
  if (!v.children.empty()) {
    o["children"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < v.children.size(); ++i) {
      nlohmann::ordered_json c = view_json(v.children[i]);
      c["awaited"] = static_cast<bool>(v.awaited[i]);
      if (v.recorded[i]) {
        nlohmann::ordered_json told;
        told["outcome"] = to_string(v.recorded[i]->outcome);
        put_bytes(told, "text", v.recorded[i]->text);
        c["told"] = told;
      }
      o["children"].push_back(c);
    }
  }
  return o;
}

int run_show_flow(Tool& tool, const FlowArgs& a) {
  QueueKeys q(a.queue);
  check_wire_gate(a.id);
  Executor x(tool.options());
  FlowView v = read_flow(x, q, a.id, kShownDepth);
  if (!v.found && v.children.empty()) {
    say_no_job(a.queue, a.id);
    return kExitNotFound;
  }
  if (a.json) {
    std::cout << json_text(view_json(v)) << '\n';
  } else {
    print_view(v, 0, std::nullopt, false);
  }
  return kExitOk;
}

}  // namespace

void add_flow(CLI::App& app, Tool& tool) {
  auto a = std::make_shared<FlowArgs>();
  CLI::App* flow = app.add_subcommand("flow", "flows: a parent job that runs after its children, in any queues");

  CLI::App* enq = flow->add_subcommand("enqueue", "enqueue a tree of jobs from a JSON file; prints each id");
  enq->add_option("file", a->file, "the tree as JSON, from FILE or - (stdin)")->required()->type_name("FILE|-");
  enq->add_flag("--json", a->json, "print the ids as a JSON tree");
  enq->footer(
      "The tree: {\"queue\": \"sheets\", \"payload\": \"...\", \"on_child_failure\": \"fail\",\n"
      "           \"children\": [{\"queue\": \"thumbs\", \"payload\": \"a.png\"}, ...]}\n"
      "Each node: queue (required), payload or payload_b64, and optionally id, lane, group (the job's\n"
      "tenant: claim shares turns between groups), on_child_failure (a parent's: fail, wait or ignore;\n"
      "default fail) and children. A payload that is not a JSON string is sent as its compact JSON text.\n"
      "A node with children runs after all of them finished, with their results. Every node is checked\n"
      "first; a parent is enqueued before its children.\n"
      "Prints one line per job, parent first, children indented under it: ID QUEUE.");
  enq->callback([&tool, a] { tool.run = [&tool, a] { return run_enqueue_flow(tool, *a); }; });

  CLI::App* show = flow->add_subcommand("show", "a job and its children, down the tree: state, results, errors");
  show->add_option("queue", a->queue, "the job's queue")->required()->type_name("QUEUE");
  show->add_option("id", a->id, "the job id")->required()->type_name("ID");
  show->add_flag("--json", a->json, "print the tree as JSON");
  show->footer(
      "Each child shows its own row (its state, result or error) and what its parent recorded of it\n"
      "([told: ...]), or [awaited] while the parent still waits for it. A child told and\n"
      "acknowledged may have no row left (a queue keeping no completed jobs): (no row). A parent that\n"
      "has run keeps no list of its children. Each job is read once, 16 levels down at most: a job met\n"
      "again says so, one deeper says how to go on (--json: \"cut\": \"repeat\" or \"depth\").");
  show->callback([&tool, a] { tool.run = [&tool, a] { return run_show_flow(tool, *a); }; });
}

}  // namespace echomq::cli
