// libFuzzer target: the pool handler's frames. Any line a handler process
// writes back goes through parse_reply_frame, which must answer "" (and a
// reply) or say what is wrong, never crash. The same bytes as a payload must
// travel intact: encode_job_frame gives one JSON line whose payload (or
// payload_b64) decodes back to them.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "handlers/pool_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace echomq;
  using namespace echomq::daemon;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);

  // Whether the id is the running job's is the caller's to check.
  Reply reply;
  (void)parse_reply_frame(bytes, reply);

  Job job;
  job.queue = "fuzz";
  job.id = "JOB_FUZZ";
  job.attempt = 1;
  job.payload = std::string(bytes);
  const std::string frame = encode_job_frame(job);
  if (frame.empty() || frame.back() != '\n' || frame.find('\n') != frame.size() - 1) __builtin_trap();
  const nlohmann::json j = nlohmann::json::parse(frame);  // throws (and so fails) on invalid JSON
  std::string back;
  if (j.contains("payload")) {
    back = j["payload"].get<std::string>();
  } else if (!base64_decode(j["payload_b64"].get<std::string>(), back)) {
    __builtin_trap();
  }
  if (back != job.payload) __builtin_trap();

  std::string round;
  if (!base64_decode(base64_encode(bytes), round) || round != bytes) __builtin_trap();
  return 0;
}
