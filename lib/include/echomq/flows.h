// Flows (PROTOCOL.md, "Flows"): a parent job runs after its children, which
// may live in any queue. One header per audience: what a producer enqueues
// (flow_enqueue.h), what a flow-aware speaker calls and reads around claim
// and settle (flow_speaker.h), and what a tool shows (flow_tools.h). This
// one brings all three.
#pragma once

#include "echomq/flow_enqueue.h"
#include "echomq/flow_speaker.h"
#include "echomq/flow_tools.h"
