#include "echomq/claim_meta.h"

#include "echomq/events.h"

namespace echomq {

namespace {
// The flag's place in the reply: right after limit_fields_read's five.
constexpr std::size_t kFlowsField = 5;
constexpr std::size_t kEventsField = 6;
}  // namespace

Command claim_meta_read(const QueueKeys& q) {
  Command read = limit_fields_read(q);
  read.push_back("flows");
  read.push_back("events");
  return read;
}

ClaimMeta decode_claim_meta(const Reply& r) {
  ClaimMeta m;
  m.limits = decode_limit_fields(r);
  const bool flow = r.type == Reply::Type::Array && r.elements.size() > kFlowsField &&
                    r.elements[kFlowsField].type == Reply::Type::String && r.elements[kFlowsField].str == "1";
  m.flows = flow ? FlowMode::Flow : FlowMode::Plain;
  if (r.type == Reply::Type::Array && r.elements.size() > kEventsField)
    m.events = decode_events(r.elements[kEventsField]);
  return m;
}

}  // namespace echomq
