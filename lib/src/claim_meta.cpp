#include "echomq/claim_meta.h"

#include "echomq/events.h"

namespace echomq {

namespace {
// The flags' places in the reply: right after limit_fields_read's five.
constexpr std::size_t kFlowsField = 5;
constexpr std::size_t kParentsField = 6;
constexpr std::size_t kEventsField = 7;

bool flag(const Reply& r, std::size_t field) {
  return r.type == Reply::Type::Array && r.elements.size() > field && r.elements[field].type == Reply::Type::String &&
         r.elements[field].str == "1";
}
}  // namespace

Command claim_meta_read(const QueueKeys& q) {
  Command read = limit_fields_read(q);
  read.push_back("flows");
  read.push_back("parents");
  read.push_back("events");
  return read;
}

ClaimMeta decode_claim_meta(const Reply& r) {
  ClaimMeta m;
  m.limits = decode_limit_fields(r);
  m.parents = flag(r, kParentsField);
  m.flows = flag(r, kFlowsField) || m.parents ? FlowMode::Flow : FlowMode::Plain;
  if (r.type == Reply::Type::Array && r.elements.size() > kEventsField)
    m.events = decode_events(r.elements[kEventsField]);
  return m;
}

}  // namespace echomq
