#include "tracing/span_record.h"

#include <limits>

namespace echomq::daemon {

namespace otel = opentelemetry;
using otel::nostd::string_view;

namespace {

// A job's span has nine attributes at most (docs/operations.md).
constexpr std::size_t kAttributes = 10;
// Keys, short values and the name: one allocation for most spans.
constexpr std::size_t kTextBytes = 320;

bool is_text(const otel::common::AttributeValue& v) {
  return otel::nostd::holds_alternative<const char*>(v) || otel::nostd::holds_alternative<string_view>(v);
}

// Arrays are views into the caller's memory, which does not outlive the
// call; emqd sets none, so none is kept.
bool is_array(const otel::common::AttributeValue& v) {
  return v.index() >= 7 && !otel::nostd::holds_alternative<std::uint64_t>(v);
}

}  // namespace

SpanRecord::SpanRecord() {
  text_.reserve(kTextBytes);
  attributes_.reserve(kAttributes);
}

SpanRecord::Text SpanRecord::keep(string_view s) {
  // Past 4 GiB (never, for a job's span) a piece is cut, not overrun.
  if (text_.size() + s.size() > std::numeric_limits<std::uint32_t>::max()) return {};
  const Text t{static_cast<std::uint32_t>(text_.size()), static_cast<std::uint32_t>(s.size())};
  text_.append(s.data(), s.size());
  return t;
}

string_view SpanRecord::view(Text t) const { return string_view(text_.data() + t.at, t.size); }

void SpanRecord::SetIdentity(const otel::trace::SpanContext& context, otel::trace::SpanId parent) noexcept {
  context_ = context;
  parent_ = parent;
}

void SpanRecord::SetAttribute(string_view key, const otel::common::AttributeValue& value) noexcept {
  if (is_array(value)) return;
  Attribute a;
  a.key = keep(key);
  if (is_text(value)) {
    a.is_text = true;
    a.text = keep(otel::nostd::holds_alternative<const char*>(value) ? string_view(otel::nostd::get<const char*>(value))
                                                                     : otel::nostd::get<string_view>(value));
  } else {
    a.scalar = value;
  }
  attributes_.push_back(a);
}

void SpanRecord::SetStatus(otel::trace::StatusCode code, string_view description) noexcept {
  has_status_ = true;
  status_ = code;
  status_text_ = keep(description);
}

void SpanRecord::SetName(string_view name) noexcept { name_ = keep(name); }

void SpanRecord::replay(otel::sdk::trace::Recordable& into) const {
  into.SetName(view(name_));
  if (scope_ != nullptr) into.SetInstrumentationScope(*scope_);
  into.SetIdentity(context_, parent_);
  into.SetTraceFlags(context_.trace_flags());
  for (const Attribute& a : attributes_) {
    into.SetAttribute(view(a.key), a.is_text ? otel::common::AttributeValue(view(a.text)) : a.scalar);
  }
  into.SetSpanKind(kind_);
  into.SetStartTime(start_);
  if (resource_ != nullptr) into.SetResource(*resource_);
  if (has_status_) into.SetStatus(status_, view(status_text_));
  into.SetDuration(duration_);
}

}  // namespace echomq::daemon
