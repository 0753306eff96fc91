#include "echomq/claim_meta.h"

namespace echomq {

namespace {
// The flag's place in the reply: right after limit_fields_read's five.
constexpr std::size_t kFlowsField = 5;
}  // namespace

Command claim_meta_read(const QueueKeys& q) {
  Command read = limit_fields_read(q);
  read.push_back("flows");
  return read;
}

ClaimMeta decode_claim_meta(const Reply& r) {
  ClaimMeta m;
  m.limits = decode_limit_fields(r);
  const bool flow = r.type == Reply::Type::Array && r.elements.size() > kFlowsField &&
                    r.elements[kFlowsField].type == Reply::Type::String && r.elements[kFlowsField].str == "1";
  m.flows = flow ? FlowMode::Flow : FlowMode::Plain;
  return m;
}

}  // namespace echomq
