// Events end to end (PROTOCOL.md, "Events"): the real emqd and emq writing
// a queue's stream on either executor, progress from each handler kind,
// and waiters that return however the stream is trimmed.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <thread>

#include "e2e_fixture.h"
#include "echomq/events.h"
#include "echomq/wait.h"

namespace echomq::test {
namespace {

// Each entry of the queue's stream that names the job: "event attempt" and
// ": error" when it has one.
std::vector<std::string> entries_of(Executor& x, const QueueKeys& q, const std::string& id) {
  std::vector<std::string> out;
  for (const EventEntry& e : decode_entries(x.command({"XRANGE", q.events, "-", "+"}))) {
    if (e.job_id != id) continue;
    out.push_back(e.event + " " + e.attempt + (e.error.empty() ? "" : ": " + e.error) +
                  (e.progress.empty() ? "" : " = " + e.progress));
  }
  return out;
}

void touch(const std::string& path) { std::ofstream(path) << "x"; }

class EventsE2E : public ::testing::TestWithParam<std::string> {
 protected:
  EventsE2E() : server(module_loaded()), x(options()) {}

  static ValkeyServer::Options module_loaded() {
    ValkeyServer::Options o;
    o.load_module = true;
    return o;
  }

  ConnectionOptions options() const {
    ConnectionOptions o = server.options();
    o.events = std::make_shared<EventsBook>();
    return o;
  }
  std::string head(const std::string& executor = "scripted") const {
    return config_head(server, "  executor: " + executor + "\n");
  }
  std::string row_field(const QueueKeys& q, const std::string& id, const std::string& f) {
    Reply r = x.command({"HGET", q.row(id), f});
    return r.type == Reply::Type::String ? r.str : "(none)";
  }

  ValkeyServer server;
  Executor x;
};

// The life of one job, entry by entry: a failure retried, a death, a retry
// from dead by emq, and its completion.
TEST_P(EventsE2E, AJobsEntriesFollowItThroughRetryDeathRetryFromDeadAndCompletion) {
  const std::string ok = server.dir() + "/ok";
  EmqdProcess d(head(GetParam()) +
                "  - name: life\n    max_attempts: 2\n    backoff: { initial_ms: 0 }\n    keep_completed_s: 60\n"
                "    events: 1000\n    handler:\n      type: exec\n      command: [\"/bin/sh\", \"-c\", \"if [ -e " +
                ok + " ]; then cat; else echo not yet >&2; exit 3; fi\"]\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  QueueKeys q("life");
  const std::string id = mint_job_id();
  ASSERT_EQ(x.eval(with_events(enqueue_call(q, id, "payload"), q, 1000)).integer, 1);
  ASSERT_TRUE(wait_for([&] { return row_field(q, id, "state") == "dead"; }, seconds(20))) << d.log();
  touch(ok);
  RunResult retried = run_program({emq_binary(), "--url", server.url(), "dead", "retry", "life", id});
  ASSERT_EQ(retried.code, 0) << retried.err;
  ASSERT_TRUE(wait_for([&] { return row_field(q, id, "state") == "completed"; }, seconds(20))) << d.log();
  const std::vector<std::string> want = {"pending 0",
                                         "active 1",
                                         "pending 1: exit code 3: not yet",
                                         "active 2",
                                         "dead 2: exit code 3: not yet",
                                         "pending 0",
                                         "active 1",
                                         "completed 1"};
  EXPECT_EQ(entries_of(x, q, id), want);
  EXPECT_EQ(row_field(q, id, "result"), "payload");
}

// How many lines of the log hold `text`.
std::size_t lines_with(const std::string& log, const std::string& text) {
  std::size_t n = 0;
  for (std::size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1)) ++n;
  return n;
}

// Issue 48 row 1: a stream key of another type (SET emq:{q}:events oops)
// makes claim refuse the queue, on either executor, with a WRONGTYPE that
// names no key. emqd says so once, naming the key and what to do, however
// often its claims meet it; the jobs wait; and once the key is mended it
// says so once more and the jobs run.
TEST_P(EventsE2E, AStreamKeyOfAnotherTypeIsNamedOnceAndOnceMoreWhenMended) {
  QueueKeys q("typed");
  EmqdProcess d(head(GetParam()) +
                "  - name: typed\n    events: 1000\n    keep_completed_s: 60\n    poll_max_ms: 50\n    handler:\n"
                "      type: exec\n      command: [cat]\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  ASSERT_FALSE(x.command({"SET", q.events, "oops"}).is_error());
  Executor plain(server.options());  // passes no stream: the enqueues go in
  for (int i = 0; i < 3; ++i) enqueue(plain, q, mint_job_id(), "held");
  const std::string said = "claims nothing until " + q.events + " is a stream again or gone";
  ASSERT_TRUE(d.wait_log(said, seconds(10))) << d.log();
  // Refused again and again (each poll), and said no more.
  const long long refusals = server.errors("WRONGTYPE");
  ASSERT_TRUE(wait_for([&] { return server.errors("WRONGTYPE") >= refusals + 10; }, seconds(20))) << d.log();
  std::string log = d.log();
  EXPECT_EQ(lines_with(log, "claims nothing until"), 1u) << log;
  EXPECT_EQ(lines_with(log, "claim refused"), 0u) << log;
  EXPECT_NE(log.find(q.events + " holds a string, not a stream"), std::string::npos) << log;
  EXPECT_NE(log.find("DEL it"), std::string::npos) << "what to do: " << log;
  QueueStats held = stats(x, q);
  EXPECT_EQ(held.pending, 3);
  EXPECT_EQ(held.counters["claimed"], 0);

  ASSERT_EQ(x.command({"DEL", q.events}).integer, 1);
  ASSERT_TRUE(wait_for([&] { return stats(x, q).counters["completed"] == 3; }, seconds(20))) << d.log();
  EXPECT_TRUE(d.wait_log(q.events + " is a stream again or gone: claiming resumes", seconds(5))) << d.log();
  log = d.log();
  EXPECT_EQ(lines_with(log, "claims nothing until"), 1u) << log;
  EXPECT_EQ(lines_with(log, "claiming resumes"), 1u) << log;
}

INSTANTIATE_TEST_SUITE_P(Executors, EventsE2E, ::testing::Values("scripted", "native"));

class Events : public EventsE2E {};

TEST_F(Events, AQueueWithEventsOffWritesNoStream) {
  QueueKeys q("quiet");
  x.command({"HSET", q.meta, "events", "50"});  // set before, and taken off by the config
  EmqdProcess d(head() +
                "  - name: quiet\n    events: off\n    keep_completed_s: 60\n    handler:\n      type: exec\n      "
                "command: [cat]\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  EXPECT_TRUE(x.command({"HGET", q.meta, "events"}).is_nil()) << "off deletes meta's field";
  const std::string id = mint_job_id();
  x.eval(with_events(enqueue_call(q, id, "p"), q, 0));
  RunResult waited = run_program({emq_binary(), "--url", server.url(), "wait", "quiet", id, "--timeout", "20"});
  EXPECT_EQ(waited.code, 0) << waited.err;
  EXPECT_EQ(waited.out, "p");
  EXPECT_EQ(x.command({"EXISTS", q.events}).integer, 0) << "a queue without events has no stream";
}

// A stream trimmed to 10 entries by another writer while 1,000 jobs run:
// every waiter still returns, each with its own job's result. The trimmer
// counts what it cut, to show that the waiters' stream was cut under
// them; emqd's own trim (events: 10) is shown once the trimmer stops.
TEST_F(Events, AStreamTrimmedToTenEntriesLosesNoWaiter) {
  EmqdProcess d(head() +
                "  - name: busy\n    concurrency: 8\n    keep_completed_s: 600\n    events: 10\n    handler:\n"
                "      type: exec\n      command: [cat]\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  QueueKeys q("busy");
  // The jobs wait, paused, until every waiter is blocked on them.
  RunResult paused = run_program({emq_binary(), "--url", server.url(), "pause", "busy"});
  ASSERT_EQ(paused.code, 0) << paused.err;
  std::vector<std::string> ids;
  for (int i = 0; i < 1000; ++i) {
    ids.push_back(mint_job_id());
    x.eval(with_events(enqueue_call(q, ids.back(), "result of " + std::to_string(i)), q, 10));
  }
  std::atomic<bool> done{false};
  std::atomic<std::int64_t> cut{0};
  std::thread trimmer([&] {
    Connection c = Connection::open(server.options());
    while (!done) cut += c.command({"XTRIM", q.events, "MAXLEN", "10"}).integer;
  });
  constexpr int kWaiters = 20;
  std::vector<std::vector<JobEnd>> ends(kWaiters);
  std::vector<std::unique_ptr<Waiter>> waiting;
  std::vector<std::thread> waiters;
  for (int w = 0; w < kWaiters; ++w) {
    waiting.push_back(std::make_unique<Waiter>(options()));
    waiters.emplace_back([&, w] {
      std::vector<std::string> mine;
      for (std::size_t i = static_cast<std::size_t>(w); i < ids.size(); i += kWaiters) mine.push_back(ids[i]);
      ends[static_cast<std::size_t>(w)] = waiting[static_cast<std::size_t>(w)]->wait(q, mine, seconds(120));
    });
  }
  for (const auto& w : waiting) ASSERT_TRUE(wait_for([&] { return w->commands() > 0; }, seconds(10)));
  RunResult resumed = run_program({emq_binary(), "--url", server.url(), "resume", "busy"});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  for (std::thread& t : waiters) t.join();
  done = true;
  trimmer.join();
  for (int w = 0; w < kWaiters; ++w) {
    std::size_t k = 0;
    for (std::size_t i = static_cast<std::size_t>(w); i < ids.size(); i += kWaiters, ++k) {
      const JobEnd& e = ends[static_cast<std::size_t>(w)].at(k);
      ASSERT_EQ(static_cast<int>(e.how), static_cast<int>(JobEnd::How::Completed)) << ids[i] << " " << e.state;
      EXPECT_EQ(e.result, "result of " + std::to_string(i));
    }
  }
  EXPECT_GT(cut.load(), 100) << "the stream was hardly trimmed while the waiters waited: this test tests nothing";
  // Without the trimmer: 300 more jobs, enqueued here without a trim (a
  // length of a million), whose claims and completions emqd's own MAXLEN
  // ~ 10 keeps to within one macro node of 10.
  const std::int64_t before = x.command({"XLEN", q.events}).integer;
  std::vector<std::string> more;
  for (int i = 0; i < 300; ++i) {
    more.push_back(mint_job_id());
    x.eval(with_events(enqueue_call(q, more.back(), "more"), q, 1000000));
  }
  Waiter last(options());
  const JobEnd end = last.wait(q, {more.back()}, seconds(120)).front();
  ASSERT_EQ(static_cast<int>(end.how), static_cast<int>(JobEnd::How::Completed)) << end.state;
  const std::vector<std::string> node = {"CONFIG", "GET", "stream-node-max-entries"};
  const std::int64_t per_node = std::stoll(x.command(node).elements.at(1).str);
  EXPECT_LE(x.command({"XLEN", q.events}).integer, 10 + per_node)
      << "emqd's MAXLEN ~ 10 keeps the stream short (it held " << before << " when the trimmer stopped)";
}

// A wait that blocks sends a bounded number of commands however long it
// waits, and wakes at the job's end: on either executor, since the
// module's entries must wake a blocked reader as XADD's do.
TEST_P(EventsE2E, AWaitBlocksWithoutPollingAndWakesAtTheEnd) {
  ConnectionOptions o = options();
  o.executor = GetParam() == "native" ? ExecutorChoice::Native : ExecutorChoice::Scripted;
  Executor run(o);
  QueueKeys q("slow");
  x.command({"HSET", q.meta, "events", "1000"});
  const std::string id = mint_job_id();
  run.eval(with_events(enqueue_call(q, id, "p"), q, 1000));
  std::vector<ClaimedJob> jobs = decode_claim(run.eval(with_events(claim_call(q, {60000, 1, 0}), q, 1000)));
  ASSERT_EQ(jobs.size(), 1u);
  Waiter waiter(options());
  std::atomic<std::int64_t> woke_ms{0};
  std::thread waiting([&] {
    Executor clock(server.options());
    clock.ensure_connected();
    JobEnd e = waiter.wait(q, {id}).front();
    woke_ms = clock.server_time_ms();
    EXPECT_EQ(static_cast<int>(e.how), static_cast<int>(JobEnd::How::Gone));
  });
  // Its MULTI (5 commands with MULTI and EXEC) and one blocking read (the
  // XREAD and the XRANGE behind it); then two seconds without a command.
  ASSERT_TRUE(wait_for([&] { return waiter.commands() >= 7; }, seconds(5)));
  const std::uint64_t sent = waiter.commands();
  std::this_thread::sleep_for(seconds(2));
  EXPECT_EQ(waiter.commands(), sent) << "a blocked wait must not poll";
  EXPECT_EQ(sent, 7u);
  const std::int64_t completed_ms = x.server_time_ms();
  run.eval(with_events(complete_call(q, {id, jobs[0].lease_epoch}, 0, ""), q, 1000));
  waiting.join();
  EXPECT_TRUE(waiter.used_events());
  // How soon is bench/'s to measure (emq_bench_wait); here, that it woke
  // for the completion and not before it.
  EXPECT_GE(woke_ms, completed_ms);
  EXPECT_LT(woke_ms - completed_ms, 30000) << "woken by the block's 60 s end, not by the completion's entry";
  std::printf("wait: woke %lld ms after the completion\n", static_cast<long long>(woke_ms - completed_ms));
}

// Progress from each handler kind reaches the row and the stream; a report
// made after the lease was lost is refused and changes nothing.
class ProgressE2E : public EventsE2E {
 protected:
  std::string handler_yaml(const std::string& kind, const std::string& dir) const {
    if (kind == "exec") {
      return "      type: exec\n      command: [\"" + std::string(EMQ_TEST_HANDLERS) + "/progress.sh\", \"" + dir +
             "\"]\n";
    }
    if (kind == "pool") {
      return "      type: pool\n      command: [\"" + std::string(EMQ_TEST_HANDLERS) + "/pool_progress.py\", \"" + dir +
             "\"]\n";
    }
    return "      type: plugin\n      path: " EMQ_LIB_DIR "/test-plugins/libprogress.so\n      config: { dir: \"" +
           dir + "\" }\n";
  }
};

TEST_P(ProgressE2E, ReachesTheRowAndTheStreamAndALostLeasesReportIsRefused) {
  const std::string dir = server.dir();
  EmqdProcess d(head() +
                "  - name: prog\n    lease_ms: 60000\n    keep_completed_s: 60\n    events: 100\n    handler:\n" +
                handler_yaml(GetParam(), dir));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  QueueKeys q("prog");
  const std::string id = mint_job_id();
  x.eval(with_events(enqueue_call(q, id, "p"), q, 100));
  ASSERT_TRUE(wait_for([&] { return row_field(q, id, "progress") == "one"; }, seconds(20))) << d.log();
  EXPECT_EQ(entries_of(x, q, id), (std::vector<std::string>{"pending 0", "active 1", "progress 1 = one"}));

  // Another worker took the lease (its epoch moved on): the next report is
  // the old lease's, and must change nothing.
  x.command({"HINCRBY", q.row(id), "lease_epoch", "1"});
  touch(dir + "/after");
  ASSERT_TRUE(d.wait_log("progress refused: the lease was lost", seconds(20))) << d.log();
  EXPECT_EQ(row_field(q, id, "progress"), "one");
  EXPECT_EQ(entries_of(x, q, id).size(), 3u);
  touch(dir + "/go");
}

INSTANTIATE_TEST_SUITE_P(HandlerKinds, ProgressE2E, ::testing::Values("exec", "pool", "plugin"));

// Reports come as fast as a handler writes them; the daemon stores at most
// four a second, and the last one wins.
TEST_F(Events, AFloodOfReportsIsStoredAtMostFourTimesASecondAndTheLastWins) {
  const std::string go = server.dir() + "/go";
  EmqdProcess d(head() +
                "  - name: flood\n    events: 1000\n    keep_completed_s: 60\n    handler:\n      type: exec\n"
                "      command: [\"/bin/sh\", \"-c\", \"i=0; while [ $i -lt 2000 ]; do i=$((i+1)); echo $i >&3; done; "
                "while [ ! -e " +
                go + " ]; do sleep 0.01; done; echo ok\"]\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  QueueKeys q("flood");
  const std::string id = mint_job_id();
  const auto began = std::chrono::steady_clock::now();
  x.eval(with_events(enqueue_call(q, id, "p"), q, 1000));
  ASSERT_TRUE(wait_for([&] { return row_field(q, id, "progress") == "2000"; }, seconds(20))) << d.log();
  const double seconds_taken = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  std::size_t reports = 0;
  for (const std::string& e : entries_of(x, q, id)) reports += e.rfind("progress", 0) == 0;
  EXPECT_LE(static_cast<double>(reports), 2 + 4 * seconds_taken) << reports << " stored in " << seconds_taken << " s";
  touch(go);
  ASSERT_TRUE(wait_for([&] { return row_field(q, id, "state") == "completed"; }, seconds(20))) << d.log();
}

// emq events --follow, a child of its own writing to a file, sees a job a
// Python producer enqueued and emqd completed.
TEST_F(Events, FollowSeesAJobEnqueuedByPythonAndCompletedByEmqd) {
  EmqdProcess d(head() + "  - name: mixed\n    events: 100\n    handler:\n      type: exec\n      command: [cat]\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  const std::string out = server.dir() + "/follow.txt";
  const pid_t follower = ::fork();
  ASSERT_GE(follower, 0);
  if (follower == 0) {
    const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, 1);
    ::execl(emq_binary().c_str(), "emq", "--url", server.url().c_str(), "events", "mixed", "--follow", "--json",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  RunResult python =
      run_program({"/usr/bin/python3", "-c",
                   "import sys; from echomq import Queue; print(Queue(sys.argv[1], 'mixed').enqueue(b'from python'))",
                   server.url()},
                  "", {"PYTHONPATH=" EMQ_SOURCE_DIR "/clients/python"});
  ASSERT_EQ(python.code, 0) << python.err;
  const std::string id = python.out.substr(0, python.out.find('\n'));
  const auto followed = [&](const std::string& event) {
    std::ifstream in(out);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return all.find("\"event\":\"" + event + "\",\"id\":\"" + id + "\"") != std::string::npos;
  };
  EXPECT_TRUE(wait_for([&] { return followed("pending") && followed("completed"); }, seconds(20))) << d.log();
  ::kill(follower, SIGTERM);
  ::waitpid(follower, nullptr, 0);
}

}  // namespace
}  // namespace echomq::test
