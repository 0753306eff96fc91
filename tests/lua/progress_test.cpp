// progress: the lease holder's report lands in the row, and on the queue's
// event stream when one is given; a lost lease's report changes nothing.
#include "wire_fixture.h"

namespace echomq::test {
namespace {

class Progress : public WireTest {
 protected:
  std::string events() const { return "emq:{" + q.queue + "}:events"; }
  Reply with_stream(const Lease& l, const std::string& value, const std::string& n) {
    return raw({Script::Progress, {q.row(l.id), q.active, events()}, {l.id, std::to_string(l.epoch), value, n}});
  }
};

TEST_F(Progress, TheLeaseHoldersReportIsStoredAndTheLatestWins) {
  Lease l = make_active();
  EXPECT_TRUE(progress(x, q, l, "10%"));
  EXPECT_TRUE(progress(x, q, l, "{\"done\":3,\"of\":7}"));
  EXPECT_EQ(row(l.id).at("progress"), "{\"done\":3,\"of\":7}");
  EXPECT_EQ(row(l.id).at("state"), "active") << "a report changes no state";
  EXPECT_EQ(complete(x, q, l, 0, "ok"), CompleteResult::Completed) << "the lease still holds";
}

TEST_F(Progress, ALostLeasesReportChangesNothing) {
  Lease l = make_active();
  auto before = snapshot();
  EXPECT_FALSE(progress(x, q, {l.id, l.epoch - 1}, "late")) << "an older epoch";
  EXPECT_EQ(snapshot(), before);
  ASSERT_EQ(complete(x, q, l, 60000, "ok"), CompleteResult::Completed);
  before = snapshot();
  EXPECT_FALSE(progress(x, q, l, "after the end")) << "a settled job";
  EXPECT_EQ(snapshot(), before);
}

TEST_F(Progress, GivenTheStreamTheReportIsAppendedAsAProgressEntry) {
  Lease l = make_active();
  Reply r = with_stream(l, "half", "100");
  ASSERT_EQ(r.type, Reply::Type::Integer) << r.str;
  EXPECT_EQ(r.integer, 1);
  Reply entries = cmd({"XRANGE", events(), "-", "+"});
  ASSERT_EQ(entries.elements.size(), 1u);
  const Reply& fields = entries.elements[0].elements.at(1);
  std::vector<std::string> got;
  for (const Reply& f : fields.elements) got.push_back(f.str);
  EXPECT_EQ(got, (std::vector<std::string>{"event", "progress", "id", l.id, "attempt", "1", "progress", "half"}));
  EXPECT_EQ(row(l.id).at("progress"), "half");
}

TEST_F(Progress, TheStreamIsTrimmedToAboutN) {
  Lease l = make_active();
  constexpr int kN = 10;
  for (int i = 0; i < 300; ++i) ASSERT_EQ(with_stream(l, std::to_string(i), std::to_string(kN)).integer, 1);
  // MAXLEN ~ N trims whole macro nodes, never below N: at least N entries
  // stay, and fewer than N and one node more (the server's
  // stream-node-max-entries, 100 by default) are kept of the 300.
  const std::vector<std::string> node = {"CONFIG", "GET", "stream-node-max-entries"};
  const std::int64_t per_node = std::stoll(cmd(node).elements.at(1).str);
  const std::int64_t kept = cmd({"XLEN", events()}).integer;
  EXPECT_GE(kept, kN);
  EXPECT_LE(kept, kN + per_node) << "the stream keeps about N = " << kN << " entries, not " << kept;
  EXPECT_EQ(row(l.id).at("progress"), "299");
}

TEST_F(Progress, AValueOver1024BytesIsRefusedWithNothingWritten) {
  Lease l = make_active();
  auto before = snapshot();
  EXPECT_THROW(progress(x, q, l, std::string(1025, 'x')), Error);
  EXPECT_EQ(snapshot(), before);
  EXPECT_TRUE(progress(x, q, l, std::string(1024, 'x'))) << "1024 bytes is the limit, not past it";
}

}  // namespace
}  // namespace echomq::test
