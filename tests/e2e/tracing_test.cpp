// Traces across the queue (docs/operations.md, "Tracing"), end to end: the
// real emqd exports its job spans with OpenTelemetry's OTLP/HTTP exporter to
// a real receiver (tests/support/otlp_receiver.py) that decodes them with
// the protocol's own definitions; the handlers are real programs, one of
// them a Node program with OpenTelemetry's SDK. The rows carry their
// producer's context as a producer writes it (traceparent, tracestate),
// set before emqd starts so that no claim can come first.
#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include "e2e_fixture.h"
#include "echomq/flow_enqueue.h"
#include "echomq/trace_context.h"
#include "http_client.h"
#include "otlp_receiver.h"

namespace echomq::test {
namespace {

using nlohmann::json;

const std::string kHandlers = EMQ_TEST_HANDLERS;
// A producer's span: the trace every job below joins unless it says otherwise.
const std::string kTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
const std::string kProducerSpan = "00f067aa0ba902b7";
const std::string kSampled = "00-" + kTrace + "-" + kProducerSpan + "-01";

// Batches leave every 50 ms instead of every 5 s: the tests wait less.
const std::vector<std::string> kQuickExport = {"OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_SDK_DISABLED=false"};

class TracingE2E : public E2E {
 protected:
  // A config with tracing: on, to `endpoint`, and `queues` below it.
  std::string config(const std::string& endpoint, const std::string& queues, const std::string& tracing = "",
                     int metrics_port = 0) {
    std::string head = config_head(server);
    head = head.substr(0, head.find("queues:\n"));
    if (metrics_port != 0) {
      head = std::regex_replace(head, std::regex("listen: \"\""), "listen: 127.0.0.1:" + std::to_string(metrics_port));
    }
    return head + "tracing:\n  enabled: true\n  endpoint: " + endpoint + "\n" + tracing + "queues:\n" + queues;
  }
  static std::string exec_queue(const std::string& name, const std::string& command, const std::string& extra = "") {
    return "  - name: " + name + "\n    keep_completed_s: 300\n" + extra + "    handler:\n      type: exec\n" +
           "      command: " + command + "\n";
  }
  // A job whose row carries `traceparent` (and `tracestate`), as a producer that traces writes it.
  std::string put_traced(const std::string& queue, const std::string& payload, const std::string& traceparent,
                         const std::string& tracestate = "") {
    const std::string id = put(queue, payload);
    Command hset{"HSET", QueueKeys(queue).row(id), "traceparent", traceparent};
    if (!tracestate.empty()) {
      hset.push_back("tracestate");
      hset.push_back(tracestate);
    }
    x.command(hset);
    return id;
  }
  static std::vector<json> named(const std::vector<json>& spans, const std::string& name) {
    std::vector<json> out;
    for (const json& s : spans) {
      if (s["name"] == name) out.push_back(s);
    }
    return out;
  }
  static std::string metric(int port, const std::string& series) {
    const std::string body = "\n" + http_get(port, "/metrics").body;
    const std::size_t at = body.find("\n" + series + " ");
    if (at == std::string::npos) return "";
    const std::size_t from = at + series.size() + 2;
    return body.substr(from, body.find('\n', from) - from);
  }
};

TEST_F(TracingE2E, AJobsSpanIsAConsumerSpanInItsProducersTrace) {
  OtlpReceiver receiver;
  const std::string id = put_traced("mail", "hello", kSampled, "vendor=opaque");
  EmqdProcess d(config(receiver.endpoint(), exec_queue("mail", "[\"" + kHandlers + "/env_dump.sh\"]")), {},
                kQuickExport);
  ASSERT_TRUE(settled("mail", 1)) << d.log();
  const std::vector<json> spans = receiver.wait_spans(1, seconds(20));
  ASSERT_EQ(spans.size(), 1u) << d.log();
  const json& s = spans[0];
  EXPECT_EQ(s["name"], "process mail");
  EXPECT_EQ(s["kind"], "SPAN_KIND_CONSUMER");
  EXPECT_EQ(s["trace_id"], kTrace);
  EXPECT_EQ(s["parent_span_id"], kProducerSpan);
  EXPECT_EQ(s["trace_state"], "vendor=opaque");
  const json& a = s["attributes"];
  EXPECT_EQ(a["messaging.system"], "echomq");
  EXPECT_EQ(a["messaging.operation.type"], "process");
  EXPECT_EQ(a["messaging.destination.name"], "mail");
  EXPECT_EQ(a["messaging.message.id"], id);
  EXPECT_EQ(a["messaging.message.body.size"], 5);
  EXPECT_EQ(a["messaging.echomq.job.attempt"], 1);
  EXPECT_EQ(a["messaging.echomq.job.outcome"], "completed");
  EXPECT_EQ(s["status"]["code"], "STATUS_CODE_UNSET");
  EXPECT_EQ(s["resource"]["service.name"], "emqd");
  EXPECT_EQ(s["scope"], "emqd");

  // The handler was handed the span's own context: its spans nest under it.
  const std::string env = row("mail", id)["result"];
  EXPECT_NE(env.find("TRACEPARENT=00-" + kTrace + "-" + s["span_id"].get<std::string>() + "-01\n"), std::string::npos)
      << env;
  EXPECT_NE(env.find("TRACESTATE=vendor=opaque\n"), std::string::npos) << env;
}

// The tested handler of docs/handlers.md, "Traces": Node with
// OpenTelemetry's SDK (clients/node's devDependencies, `make node-deps`).
TEST_F(TracingE2E, AHandlersOwnSpanNestsUnderTheJobsSpan) {
  const std::string modules = std::string(EMQ_SOURCE_DIR) + "/clients/node/node_modules";
  ASSERT_TRUE(std::ifstream(modules + "/@opentelemetry/sdk-trace-base/package.json").good())
      << "clients/node/node_modules lacks OpenTelemetry's SDK: make node-deps (npm ci --prefix clients/node)";
  OtlpReceiver receiver;
  const std::string id = put_traced("upper", "abc", kSampled);
  const std::string queue =
      "  - name: upper\n    keep_completed_s: 300\n    handler:\n      type: exec\n"
      "      command: [\"" EMQ_NODE "\", \"" EMQ_SOURCE_DIR
      "/examples/handlers/exec/traced_upper.js\"]\n"
      "      env: { NODE_PATH: \"" +
      modules + "\", OTEL_EXPORTER_OTLP_ENDPOINT: \"" + receiver.endpoint() + "\" }\n";
  EmqdProcess d(config(receiver.endpoint(), queue), {}, kQuickExport);
  ASSERT_TRUE(settled("upper", 1)) << d.log();
  EXPECT_EQ(row("upper", id)["result"], "ABC");
  const std::vector<json> spans = receiver.wait_spans(2, seconds(20));
  const std::vector<json> job = named(spans, "process upper");
  const std::vector<json> own = named(spans, "upper");
  ASSERT_EQ(job.size(), 1u) << d.log();
  ASSERT_EQ(own.size(), 1u) << d.log();
  EXPECT_EQ(own[0]["trace_id"], kTrace);
  EXPECT_EQ(own[0]["parent_span_id"], job[0]["span_id"]) << "the handler's span nests under the job's";
  EXPECT_EQ(own[0]["resource"]["service.name"], "upper-handler");
  EXPECT_EQ(job[0]["parent_span_id"], kProducerSpan);
}

// The shell example of docs/handlers.md: the context goes on to the
// service the handler calls, as W3C headers.
TEST_F(TracingE2E, AShellHandlerPassesTheContextOnAsHeaders) {
  OtlpReceiver receiver;
  const std::string id = put_traced("call", "payload", kSampled, "vendor=x");
  const std::string queue = exec_queue("call", "[\"" EMQ_SOURCE_DIR "/examples/handlers/exec/traced_curl.sh\"]") +
                            "      env: { SERVICE_URL: \"" + receiver.endpoint() + "/resize\" }\n";
  EmqdProcess d(config(receiver.endpoint(), queue), {}, kQuickExport);
  ASSERT_TRUE(settled("call", 1)) << d.log();
  EXPECT_EQ(row("call", id)["result"], "ok") << d.log();
  const std::vector<json> spans = receiver.wait_spans(1, seconds(20));
  ASSERT_EQ(spans.size(), 1u);
  json call;
  for (const json& r : receiver.requests()) {
    if (r["path"] == "/resize") call = r;
  }
  ASSERT_FALSE(call.is_null()) << d.log();
  EXPECT_EQ(call["body"], "payload");
  EXPECT_EQ(call["headers"]["traceparent"], "00-" + kTrace + "-" + spans[0]["span_id"].get<std::string>() + "-01");
  EXPECT_EQ(call["headers"]["tracestate"], "vendor=x");
}

TEST_F(TracingE2E, ARetryIsANewSpanOfTheSameTrace) {
  OtlpReceiver receiver;
  const std::string id = put_traced("flaky", "x", kSampled);
  EmqdProcess d(config(receiver.endpoint(),
                       exec_queue("flaky", "[\"" + kHandlers + "/fails_first_attempt.sh\"]",
                                  "    max_attempts: 3\n    backoff: { initial_ms: 20, multiplier: 1.0, max_ms: 20, "
                                  "jitter: 0 }\n")),
                {}, kQuickExport);
  ASSERT_TRUE(settled("flaky", 1)) << d.log();
  EXPECT_EQ(row("flaky", id)["attempts"], "2");
  std::vector<json> spans = receiver.wait_spans(2, seconds(20));
  ASSERT_EQ(spans.size(), 2u) << d.log();
  std::sort(spans.begin(), spans.end(), [](const json& a, const json& b) {
    return a["attributes"]["messaging.echomq.job.attempt"] < b["attributes"]["messaging.echomq.job.attempt"];
  });
  for (const json& s : spans) {
    EXPECT_EQ(s["trace_id"], kTrace);
    EXPECT_EQ(s["parent_span_id"], kProducerSpan) << "each attempt is a child of the producer's span";
    EXPECT_EQ(s["attributes"]["messaging.message.id"], id);
  }
  EXPECT_NE(spans[0]["span_id"], spans[1]["span_id"]);
  EXPECT_EQ(spans[0]["attributes"]["messaging.echomq.job.attempt"], 1);
  EXPECT_EQ(spans[0]["attributes"]["messaging.echomq.job.outcome"], "retry");
  EXPECT_EQ(spans[0]["attributes"]["error.type"], "retry");
  EXPECT_EQ(spans[0]["status"]["code"], "STATUS_CODE_ERROR");
  EXPECT_NE(spans[0]["status"]["message"].get<std::string>().find("first attempt fails"), std::string::npos)
      << spans[0];
  EXPECT_EQ(spans[1]["attributes"]["messaging.echomq.job.attempt"], 2);
  EXPECT_EQ(spans[1]["attributes"]["messaging.echomq.job.outcome"], "completed");
  EXPECT_EQ(spans[1]["status"]["code"], "STATUS_CODE_UNSET");
}

// A job with no context starts a trace of its own, and dies as "dead".
TEST_F(TracingE2E, AJobWithNoContextStartsATrace) {
  OtlpReceiver receiver;
  const std::string id = put("lone", "bad");
  EmqdProcess d(config(receiver.endpoint(),
                       exec_queue("lone", "[\"" + kHandlers + "/stderr_lines.sh\"]", "    max_attempts: 1\n")),
                {}, kQuickExport);
  ASSERT_TRUE(settled("lone", 1)) << d.log();
  const std::vector<json> spans = receiver.wait_spans(1, seconds(20));
  ASSERT_EQ(spans.size(), 1u) << d.log();
  EXPECT_EQ(spans[0]["parent_span_id"], "");
  EXPECT_NE(spans[0]["trace_id"], kTrace);
  EXPECT_EQ(spans[0]["trace_id"].get<std::string>().size(), 32u);
  EXPECT_EQ(spans[0]["attributes"]["messaging.echomq.job.outcome"], "dead");
  EXPECT_EQ(spans[0]["attributes"]["error.type"], "dead");
  // Every line emqd wrote for the job carries its trace id, the handler's
  // stderr among them: a log search by trace id finds them.
  const std::string trace = spans[0]["trace_id"];
  std::istringstream log(d.log());
  int stderr_lines = 0;
  int lines = 0;
  for (std::string line; std::getline(log, line);) {
    // The claim comes before the trace of a job that brought none.
    if (line.find("job=" + id) == std::string::npos || line.find(" claimed") != std::string::npos) continue;
    ++lines;
    EXPECT_NE(line.find(" trace_id=" + trace), std::string::npos) << line;
    if (line.find("stderr: bad") != std::string::npos) ++stderr_lines;
  }
  EXPECT_EQ(stderr_lines, 1) << d.log();
  EXPECT_GE(lines, 4) << "started, the exit, stderr, dead:\n" << d.log();
}

// A collector that refuses, hangs or is not there: every job completes, and
// what could not be sent is counted by reason.
class CollectorDown : public TracingE2E {
 protected:
  void run_jobs(const std::string& endpoint, const std::string& reason, int jobs, std::vector<std::string> env) {
    for (int i = 0; i < jobs; ++i) put_traced("work", std::to_string(i), kSampled);
    const int port = unused_loopback_port();
    env.insert(env.end(), kQuickExport.begin(), kQuickExport.end());
    EmqdProcess d(
        config(endpoint, exec_queue("work", "[\"" + kHandlers + "/ok.sh\"]", "    concurrency: 4\n"), "", port), {},
        env);
    EXPECT_TRUE(settled("work", jobs, seconds(60))) << d.log();
    EXPECT_EQ(completed("work"), jobs);
    const std::string series = "emq_trace_spans_dropped_total{reason=\"" + reason + "\"}";
    EXPECT_TRUE(wait_for([&] { return metric(port, series) != "" && metric(port, series) != "0"; }, seconds(30)))
        << series << " stays " << metric(port, series) << "\n"
        << d.log();
    // The stop is not held by the collector either.
    d.signal(SIGTERM);
    EXPECT_EQ(d.wait_exit(seconds(15)), 0) << d.log();
  }
};

TEST_F(CollectorDown, ARefusingCollectorCostsNoJob) {
  OtlpReceiver receiver(OtlpReceiver::Mode::Refuse);
  run_jobs(receiver.endpoint(), "export_failed", 20, {});
  EXPECT_GE(receiver.requests().size(), 1u) << "the exporter did try";
}

TEST_F(CollectorDown, AnAbsentCollectorCostsNoJob) {
  run_jobs("http://127.0.0.1:" + std::to_string(unused_loopback_port()), "export_failed", 20, {});
}

// The exporter waits on the hung request; the spans of the jobs that end
// meanwhile find the queue (8 spans) full and are dropped at once.
TEST_F(CollectorDown, AHangingCollectorCostsNoJob) {
  OtlpReceiver receiver(OtlpReceiver::Mode::Hang);
  run_jobs(receiver.endpoint(), "queue_full", 60, {"OTEL_BSP_MAX_QUEUE_SIZE=8", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE=4"});
}

// The ratio is of the traces emqd starts: a job with no context, or with
// its producer's decision not to sample, sends nothing at 0; the context
// still reaches the handler, so the trace stays one.
TEST_F(TracingE2E, SampleRatioZeroSendsNothing) {
  OtlpReceiver receiver;
  const std::string unsampled = "00-" + kTrace + "-" + kProducerSpan + "-00";
  const std::string plain = put("quiet", "a");
  const std::string traced = put_traced("quiet", "b", unsampled);
  {
    EmqdProcess d(
        config(receiver.endpoint(), exec_queue("quiet", "[\"" + kHandlers + "/env_dump.sh\"]"), "  sample_ratio: 0\n"),
        {}, kQuickExport);
    ASSERT_TRUE(settled("quiet", 2)) << d.log();
    d.signal(SIGTERM);
    ASSERT_EQ(d.wait_exit(seconds(15)), 0) << d.log();  // the stop flushes whatever waits
  }
  EXPECT_EQ(receiver.requests().size(), 0u);
  const std::string env = row("quiet", traced)["result"];
  EXPECT_TRUE(std::regex_search(env, std::regex("TRACEPARENT=00-" + kTrace + "-[0-9a-f]{16}-00\n"))) << env;
  EXPECT_TRUE(
      std::regex_search(row("quiet", plain)["result"], std::regex("TRACEPARENT=00-[0-9a-f]{32}-[0-9a-f]{16}-00\n")));
}

// Parent-based: a producer that sampled keeps its trace whole whatever the ratio.
TEST_F(TracingE2E, ASampledProducerKeepsItsJobsSpansAtRatioZero) {
  OtlpReceiver receiver;
  put_traced("kept", "a", kSampled);
  EmqdProcess d(config(receiver.endpoint(), exec_queue("kept", "[\"" + kHandlers + "/ok.sh\"]"), "  sample_ratio: 0\n"),
                {}, kQuickExport);
  ASSERT_TRUE(settled("kept", 1)) << d.log();
  const std::vector<json> spans = receiver.wait_spans(1, seconds(20));
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0]["trace_id"], kTrace);
}

// Spans leave in full batches, never a request for every few of them: with
// a batch of 100 and a delay of a minute, 250 jobs make two requests of
// 100 while emqd runs, and the last 50 leave at the stop.
TEST_F(TracingE2E, SpansLeaveInFullBatchesAndTheRestAtTheDelayOrTheStop) {
  OtlpReceiver receiver;
  constexpr int kJobs = 250;
  for (int i = 0; i < kJobs; ++i) put_traced("batched", std::to_string(i), kSampled);
  EmqdProcess d(
      config(receiver.endpoint(), exec_queue("batched", "[\"" + kHandlers + "/ok.sh\"]", "    concurrency: 8\n")), {},
      {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE=100", "OTEL_BSP_SCHEDULE_DELAY=60000"});
  ASSERT_TRUE(settled("batched", kJobs, seconds(120))) << d.log();
  auto sizes = [&] {
    std::vector<int> out;
    for (const json& r : receiver.requests()) out.push_back(r["spans"]);
    return out;
  };
  // The receiver notes a request after its spans: wait on the requests.
  wait_for([&] { return sizes().size() >= 2; }, seconds(20));
  EXPECT_EQ(sizes(), (std::vector<int>{100, 100})) << "the 50 left wait for the delay";
  d.signal(SIGTERM);
  ASSERT_EQ(d.wait_exit(seconds(15)), 0) << d.log();
  EXPECT_EQ(sizes(), (std::vector<int>{100, 100, 50})) << "the stop sends what waits";
  EXPECT_EQ(receiver.spans().size(), static_cast<std::size_t>(kJobs));
}

// A flow is one trace: the producer gives the root its context and the
// speaker writes it into every child that has none of its own, so each
// job's span, the parent's after its children's, is a child of the
// producer's span. The tree as the receiver saw it is printed.
TEST_F(TracingE2E, AFlowsChildrenShareTheParentsTrace) {
  OtlpReceiver receiver;
  const std::string ok = "[\"" + kHandlers + "/ok.sh\"]";
  auto job = [](const std::string& queue, const std::string& payload) {
    FlowNode n;
    n.queue = queue;
    n.payload = payload;
    return n;
  };
  FlowNode root = job("report", "sum");
  root.job.traceparent = kSampled;  // the children are given none
  root.children = {job("part", "a"), job("part", "b")};
  const FlowJob ids = enqueue_flow(x, root);
  EmqdProcess d(config(receiver.endpoint(), exec_queue("report", ok) + exec_queue("part", ok)), {}, kQuickExport);
  ASSERT_TRUE(settled("part", 2)) << d.log();
  ASSERT_TRUE(settled("report", 1)) << d.log();
  const std::vector<json> spans = receiver.wait_spans(3, seconds(20));
  const std::vector<json> parts = named(spans, "process part");
  const std::vector<json> report = named(spans, "process report");
  ASSERT_EQ(parts.size(), 2u) << d.log();
  ASSERT_EQ(report.size(), 1u) << d.log();
  std::vector<std::string> part_ids;
  for (const json& s : parts) part_ids.push_back(s["attributes"]["messaging.message.id"]);
  std::sort(part_ids.begin(), part_ids.end());
  std::vector<std::string> child_ids{ids.children[0].id, ids.children[1].id};
  std::sort(child_ids.begin(), child_ids.end());
  EXPECT_EQ(part_ids, child_ids);
  EXPECT_EQ(report[0]["attributes"]["messaging.message.id"], ids.id);
  std::printf("the flow's spans as the receiver saw them:\n  producer %s (trace %s)\n", kProducerSpan.c_str(),
              kTrace.c_str());
  for (const json& s : {report[0], parts[0], parts[1]}) {
    EXPECT_EQ(s["trace_id"], kTrace) << s.dump();
    EXPECT_EQ(s["parent_span_id"], kProducerSpan) << s.dump();
    EXPECT_EQ(s["kind"], "SPAN_KIND_CONSUMER");
    EXPECT_EQ(s["attributes"]["messaging.echomq.job.outcome"], "completed");
    std::printf("  └─ %s %s %s, job %s\n", s["name"].get<std::string>().c_str(),
                s["span_id"].get<std::string>().c_str(), s["kind"].get<std::string>().c_str(),
                s["attributes"]["messaging.message.id"].get<std::string>().c_str());
  }
  EXPECT_GE(report[0]["start_ns"].get<std::uint64_t>(),
            std::max(parts[0]["end_ns"].get<std::uint64_t>(), parts[1]["end_ns"].get<std::uint64_t>()))
      << "the parent runs after its children";
}

// Off (the default): no read of the rows' contexts, no context to the handler.
TEST_F(TracingE2E, OffReadsNothingAndPassesNoContext) {
  const std::string id = put_traced("plain", "a", kSampled);
  // Every command the server runs from here on, with its arguments.
  x.command({"CONFIG", "SET", "slowlog-log-slower-than", "0"});
  x.command({"CONFIG", "SET", "slowlog-max-len", "100000"});
  x.command({"SLOWLOG", "RESET"});
  std::string head = config_head(server);
  EmqdProcess d(head + exec_queue("plain", "[\"" + kHandlers + "/env_dump.sh\"]") + "      inherit_env: true\n", {},
                {"TRACEPARENT=" + kSampled});
  ASSERT_TRUE(settled("plain", 1)) << d.log();
  const std::string env = row("plain", id)["result"];
  EXPECT_EQ(env.find("TRACEPARENT"), std::string::npos) << "emqd's own TRACEPARENT is no job's either:\n" << env;
  const std::string commands = server.cli({"SLOWLOG", "GET", "100000"});
  EXPECT_NE(commands.find("EVALSHA"), std::string::npos) << "the log holds emqd's commands:\n" << commands;
  EXPECT_EQ(commands.find("traceparent"), std::string::npos) << "tracing off reads no row's context:\n" << commands;
  EXPECT_EQ(d.log().find("trace_id="), std::string::npos);
}

}  // namespace
}  // namespace echomq::test
