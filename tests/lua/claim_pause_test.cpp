// A pause's who, why and end (PROTOCOL.md, "Pause"), on either executor:
// a pause with an end is lifted by the first claim after it, with no
// command sent; a broken end refuses the claim and keeps the pause; pause
// and resume write and delete the four fields as the contract says.
#include "wire_fixture.h"

namespace echomq::test {
namespace {

using namespace std::chrono_literals;

class ClaimPause : public WireTest {
 protected:
  std::size_t claimed() { return claim(x, q, {30000, 10, 0}).size(); }
  // The pause fields meta holds, and nothing else of it.
  Row pause_fields() {
    Row out;
    for (auto& [f, v] : hash(q.meta)) {
      if (f.rfind("paused", 0) == 0) out[f] = v;
    }
    return out;
  }
};

TEST_F(ClaimPause, APauseForTwoSecondsEndsByItselfAtTheNextClaim) {
  const std::string id = enqueue_new();
  cmd({"HSET", q.meta, "lease_ms", "30000"});
  pause(x, q, {"ann@host-a", "deploy of v2", 2000});
  const Row set = pause_fields();
  ASSERT_EQ(set.size(), 4u);
  EXPECT_EQ(set.at("paused"), "1");
  EXPECT_EQ(set.at("paused_by"), "ann@host-a");
  EXPECT_EQ(set.at("paused_reason"), "deploy of v2");
  const std::int64_t until = std::stoll(set.at("paused_until"));
  EXPECT_NEAR(static_cast<double>(until - now_ms()), 2000, 500);

  const auto before = snapshot();
  EXPECT_EQ(claimed(), 0u) << "a pause whose end is ahead held nothing back";
  EXPECT_EQ(snapshot(), before) << "a claim of a paused queue wrote something";

  // No command but claims: the server's clock alone ends it.
  ASSERT_TRUE(wait_for([&] { return now_ms() >= until; }, 10s));
  EXPECT_EQ(claimed(), 1u) << "the pause did not end at its end";
  EXPECT_EQ(row(id).at("state"), "active");
  EXPECT_EQ(hash(q.meta), (Row{{"lease_ms", "30000"}})) << "the four pause fields must go, and only they";
  EXPECT_FALSE(stats(x, q).paused);
}

TEST_F(ClaimPause, ABrokenEndRefusesTheClaimByNameAndKeepsThePause) {
  enqueue_new();
  for (const char* broken : {"soon", "-1", "1.5", "007", "1000000000000001"}) {
    cmd({"HSET", q.meta, "paused", "1", "paused_until", broken});
    const auto before = snapshot();
    const WireError e = eval_error(claim_call(q, {30000, 10, 0}));
    EXPECT_EQ(e.kind, ErrorKind::Arg) << broken << ": " << e.message;
    EXPECT_NE(e.message.find("EMQARG " + q.meta + " paused_until must be an integer in 0..1000000000000000"),
              std::string::npos)
        << e.message;
    EXPECT_EQ(snapshot(), before) << broken << ": written before the refusal";
  }
  const QueueStats s = stats(x, q);
  EXPECT_TRUE(s.paused);
  EXPECT_EQ(s.pause.broken_until, std::optional<std::string>("1000000000000001"));
  EXPECT_FALSE(s.pause.until_ms.has_value());
}

TEST_F(ClaimPause, PauseAgainReplacesEveryFieldAndResumeDeletesTheFour) {
  enqueue_new();
  pause(x, q, {"ann@host-a", "deploy", 3600000});
  // A pause with no end and no reason must not inherit the old ones.
  pause(x, q, {"bob@host-b", "", std::nullopt});
  EXPECT_EQ(pause_fields(), (Row{{"paused", "1"}, {"paused_by", "bob@host-b"}}));
  EXPECT_EQ(claimed(), 0u);
  const QueueStats s = stats(x, q);
  EXPECT_TRUE(s.paused);
  EXPECT_EQ(s.pause.by, "bob@host-b");
  EXPECT_FALSE(s.pause.until_ms.has_value());

  cmd({"HSET", q.meta, "paused_reason", "left", "paused_until", "5"});
  resume(x, q);
  EXPECT_TRUE(pause_fields().empty());
  EXPECT_EQ(claimed(), 1u);
}

TEST_F(ClaimPause, TooLongWhoOrWhyIsRefusedBeforeAnythingIsWritten) {
  const auto before = snapshot();
  EXPECT_THROW(pause(x, q, {std::string(65, 'a'), "", std::nullopt}), Error);
  EXPECT_THROW(pause(x, q, {"", std::string(257, 'r'), std::nullopt}), Error);
  EXPECT_THROW(pause(x, q, {"", "", 0}), Error);
  EXPECT_EQ(snapshot(), before);
  EXPECT_NO_THROW(pause(x, q, {std::string(64, 'a'), std::string(256, 'r'), 1}));
}

}  // namespace
}  // namespace echomq::test
