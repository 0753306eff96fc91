// Events on a cluster: each queue's stream lives on its queue's shard (the
// slot of {q}), every transition passes it through whichever node's URL a
// speaker was given, and a wait through any node's URL returns.
#include <thread>

#include "cluster_fixture.h"
#include "echomq/events.h"
#include "echomq/wait.h"

namespace echomq::test {
namespace {

class ClusterEvents : public ClusterTest {
 protected:
  ConnectionOptions with_book(std::size_t node) const {
    ConnectionOptions o = cluster.options(node);
    o.events = std::make_shared<EventsBook>();
    return o;
  }
};

TEST_F(ClusterEvents, TheStreamIsOnTheQueuesShardAndAWaitWorksThroughAnyNode) {
  for (std::size_t home = 0; home < 3; ++home) {
    const QueueKeys q(queue_on(home, "ev"));
    x.command(events_write(q, 100));
    // Produced and settled through one node, waited on through another.
    Executor producer(with_book((home + 1) % cluster.size()));
    const std::string id = mint_job_id();
    ASSERT_EQ(enqueue(producer, q, id, "p"), EnqueueResult::Enqueued);
    std::vector<ClaimedJob> got = claim(producer, q, ClaimArgs{});
    ASSERT_EQ(got.size(), 1u);
    Waiter waiter(with_book((home + 2) % cluster.size()));
    std::thread settle([&] {
      ASSERT_TRUE(wait_for([&] { return waiter.commands() > 0; }, seconds(10)));
      EXPECT_EQ(complete(producer, q, Lease{id, got[0].lease_epoch}, 60000, "done"), CompleteResult::Completed);
    });
    const JobEnd end = waiter.wait(q, {id}, seconds(20)).front();
    settle.join();
    EXPECT_TRUE(waiter.used_events());
    EXPECT_EQ(static_cast<int>(end.how), static_cast<int>(JobEnd::How::Completed)) << q.queue;
    EXPECT_EQ(end.result, "done");
    // The stream is a key of the queue's slot, held by the shard that owns it.
    Connection owner = Connection::open(cluster.options(cluster.owner_of(key_slot(q.events))));
    EXPECT_EQ(owner.command({"XLEN", q.events}).integer, 3) << "pending, active, completed";
    EXPECT_EQ(cluster.owner_of(key_slot(q.events)), cluster.owner_of(key_slot(q.pending)));
  }
}

}  // namespace
}  // namespace echomq::test
