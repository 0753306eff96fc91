// A plugin in C++ that misbehaves on demand, the payload saying how:
//   throw       a std::runtime_error escapes handle()
//   throw-int   an int escapes handle()
//   code        returns 7, no known code
//   null        writes its result from a NULL pointer
//   huge        writes until the result writer refuses, then returns OK
//   retry       fails with an error text
//   permanent   fails for good with an error text
//   long-error  fails with 10000 bytes of error text
//   slow        sleeps 300 ms, then returns "slow done"
//   anything else: echoed back
// create() throws when the config holds "throw"; destroy() writes the
// file named by the config's "marker" (so a test can see it was called).
#include <echomq/plugin.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

struct State {
  std::string marker;
};

std::string marker_of(const std::string& config) {
  const std::string key = "\"marker\":\"";
  const auto at = config.find(key);
  if (at == std::string::npos) return {};
  const auto end = config.find('"', at + key.size());
  return config.substr(at + key.size(), end - at - key.size());
}

int fail(emq_result* out, const std::string& text, int code) {
  out->write_error(out->ctx, text.data(), text.size());
  return code;
}

}  // namespace

extern "C" {

EMQ_PLUGIN_EXPORT int emq_plugin_abi_version(void) { return EMQ_PLUGIN_ABI_VERSION; }

EMQ_PLUGIN_EXPORT void* emq_plugin_create(const char* config_json, size_t config_len, char* err, size_t err_len) {
  (void)err, (void)err_len;
  const std::string config(config_json, config_len);
  if (config.find("throw") != std::string::npos) throw std::runtime_error("misbehaves: create threw on purpose");
  return new State{marker_of(config)};
}

EMQ_PLUGIN_EXPORT int emq_plugin_handle(void* state, const emq_job* job, emq_result* out) {
  (void)state;
  const std::string payload(reinterpret_cast<const char*>(job->payload), job->payload_len);
  if (payload == "throw") throw std::runtime_error("misbehaves: thrown on purpose");
  if (payload == "throw-int") throw 42;
  if (payload == "code") return 7;
  if (payload == "null") {
    out->write_result(out->ctx, nullptr, 5);
    return EMQ_PLUGIN_OK;
  }
  if (payload == "huge") {
    const std::string chunk(4096, 'x');
    while (out->write_result(out->ctx, chunk.data(), chunk.size()) == 0) {
    }
    return EMQ_PLUGIN_OK;
  }
  if (payload == "retry") return fail(out, "misbehaves: try again later", EMQ_PLUGIN_RETRY);
  if (payload == "permanent") return fail(out, "misbehaves: this job can never work", EMQ_PLUGIN_PERMANENT);
  if (payload == "long-error") return fail(out, std::string(10000, 'e'), EMQ_PLUGIN_RETRY);
  if (payload == "slow") {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const char done[] = "slow done";
    out->write_result(out->ctx, done, sizeof done - 1);
    return EMQ_PLUGIN_OK;
  }
  out->write_result(out->ctx, job->payload, job->payload_len);
  return EMQ_PLUGIN_OK;
}

EMQ_PLUGIN_EXPORT void emq_plugin_destroy(void* state) {
  auto* s = static_cast<State*>(state);
  if (!s->marker.empty()) std::ofstream(s->marker) << "destroyed\n";
  delete s;
}

}  // extern "C"
