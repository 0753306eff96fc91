// A span as plain values until its batch leaves: a job's span writes
// into one (job_span.cpp), and so would any span of the SDK's tracer
// (SpanBatcher::MakeRecordable); the batcher writes each record into one
// of the OTLP exporter's recordables on the export thread, just before the
// export. The exporter's recordable is a protocol message of some forty
// heap objects (a few per attribute); made on a slot's thread and freed on
// the export thread, it cost the slot more than the rest of the span
// (docs/operations.md, "Tracing"). This one takes three allocations.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "opentelemetry/sdk/trace/recordable.h"

namespace echomq::daemon {

class SpanRecord final : public opentelemetry::sdk::trace::Recordable {
 public:
  SpanRecord();

  void SetIdentity(const opentelemetry::trace::SpanContext& context,
                   opentelemetry::trace::SpanId parent) noexcept override;
  void SetAttribute(opentelemetry::nostd::string_view key,
                    const opentelemetry::common::AttributeValue& value) noexcept override;
  // emqd's spans carry no events and no links (docs/operations.md lists
  // what they carry): none is kept.
  void AddEvent(opentelemetry::nostd::string_view, opentelemetry::common::SystemTimestamp,
                const opentelemetry::common::KeyValueIterable&) noexcept override {}
  void AddLink(const opentelemetry::trace::SpanContext&,
               const opentelemetry::common::KeyValueIterable&) noexcept override {}
  void SetStatus(opentelemetry::trace::StatusCode code,
                 opentelemetry::nostd::string_view description) noexcept override;
  void SetName(opentelemetry::nostd::string_view name) noexcept override;
  void SetSpanKind(opentelemetry::trace::SpanKind kind) noexcept override { kind_ = kind; }
  void SetResource(const opentelemetry::sdk::resource::Resource& resource) noexcept override { resource_ = &resource; }
  void SetStartTime(opentelemetry::common::SystemTimestamp start) noexcept override { start_ = start; }
  void SetDuration(std::chrono::nanoseconds duration) noexcept override { duration_ = duration; }
  void SetInstrumentationScope(
      const opentelemetry::sdk::instrumentationscope::InstrumentationScope& scope) noexcept override {
    scope_ = &scope;
  }

  // Writes the span into `into` (the exporter's recordable) as the SDK's
  // span would have, in the same order. The resource and scope are the
  // tracer provider's, which outlives every export.
  void replay(opentelemetry::sdk::trace::Recordable& into) const;

 private:
  // A piece of text_: keys, string values, the name, the status.
  struct Text {
    std::uint32_t at = 0;
    std::uint32_t size = 0;
  };
  struct Attribute {
    Text key;
    bool is_text = false;
    Text text;                                     // a string value
    opentelemetry::common::AttributeValue scalar;  // any other
  };

  Text keep(opentelemetry::nostd::string_view s);
  opentelemetry::nostd::string_view view(Text t) const;

  std::string text_;
  std::vector<Attribute> attributes_;
  Text name_;
  opentelemetry::trace::SpanContext context_{false, false};
  opentelemetry::trace::SpanId parent_;
  opentelemetry::trace::SpanKind kind_ = opentelemetry::trace::SpanKind::kInternal;
  opentelemetry::common::SystemTimestamp start_;
  std::chrono::nanoseconds duration_{0};
  bool has_status_ = false;
  opentelemetry::trace::StatusCode status_ = opentelemetry::trace::StatusCode::kUnset;
  Text status_text_;
  const opentelemetry::sdk::resource::Resource* resource_ = nullptr;
  const opentelemetry::sdk::instrumentationscope::InstrumentationScope* scope_ = nullptr;
};

}  // namespace echomq::daemon
