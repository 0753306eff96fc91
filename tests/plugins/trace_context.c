/* A plugin that answers each job with the trace context the host table
 * gives it (emq_host's trace_context), as "traceparent|tracestate"; with no
 * host table, or one without the member (an older emqd), "none". */
#include <echomq/plugin.h>

#include <stddef.h>
#include <string.h>

static const emq_host* host;

EMQ_PLUGIN_EXPORT int emq_plugin_abi_version(void) { return EMQ_PLUGIN_ABI_VERSION; }

EMQ_PLUGIN_EXPORT void emq_plugin_host(const emq_host* h) { host = h; }

EMQ_PLUGIN_EXPORT void* emq_plugin_create(const char* config_json, size_t config_len, char* err, size_t err_len) {
  (void)config_json, (void)config_len, (void)err, (void)err_len;
  return &host;
}

EMQ_PLUGIN_EXPORT int emq_plugin_handle(void* state, const emq_job* job, emq_result* out) {
  (void)state, (void)job;
  const char* traceparent = NULL;
  const char* tracestate = NULL;
  if (host == NULL || host->size <= offsetof(emq_host, trace_context) ||
      host->trace_context(out->ctx, &traceparent, &tracestate) != 0) {
    out->write_result(out->ctx, "none", 4);
    return EMQ_PLUGIN_OK;
  }
  out->write_result(out->ctx, traceparent, strlen(traceparent));
  out->write_result(out->ctx, "|", 1);
  out->write_result(out->ctx, tracestate, strlen(tracestate));
  return EMQ_PLUGIN_OK;
}

EMQ_PLUGIN_EXPORT void emq_plugin_destroy(void* state) { (void)state; }
