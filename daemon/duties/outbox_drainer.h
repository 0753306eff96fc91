// The outbox drainer: tells parents that their children finished. For each
// configured queue it reads the outbox (children of the queue that
// completed or died, whose parent has not been told), calls children_done
// once for each parent on its queue, then outbox_ack_many once for each
// child's queue (PROTOCOL.md, "Flows"). A crash between the two leaves the
// ids in the outbox and the next round repeats children_done, which changes
// nothing the second time.
// Every daemon runs one; any number may drain the same outbox at once.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "config/config_types.h"
#include "echomq/executor.h"
#include "echomq/flow_batches.h"
#include "echomq/keyspace.h"
#include "metrics.h"
#include "duties/periodic.h"
#include "duties/stuck_news.h"

namespace echomq::daemon {

class OutboxDrainer : public Periodic {
 public:
  OutboxDrainer(const Config& config, const ConnectionOptions& server, Metrics& metrics,
                ReconnectPolicy reconnect = {});
  ~OutboxDrainer() override;

 protected:
  std::chrono::milliseconds tick() override;

 private:
  // One id of an outbox, as read from its row.
  struct Finished;
  std::vector<Finished> read_outboxes();
  // Tells the parents and acknowledges; returns how many ids left an outbox.
  std::size_t tell(const std::vector<Finished>& batch);

  const Config& config_;
  std::vector<QueueKeys> keys_;
  Executor executor_;
  Metrics& metrics_;
  std::chrono::milliseconds idle_;
  StuckNews stuck_;             // entries whose parent refused the news, held back
  ParentQueues parent_queues_;  // marked with meta parents, for older producers' parents
};

}  // namespace echomq::daemon
