/* A plugin with the optional flows entry point: a parent's result lists
 * its children as "children=N" then ";queue:id=c|d:text" each; any other
 * job's result is "plain". */
#include <echomq/plugin.h>

#include <stdio.h>
#include <string.h>

static int state_token;

EMQ_PLUGIN_EXPORT int emq_plugin_abi_version(void) { return EMQ_PLUGIN_ABI_VERSION; }

EMQ_PLUGIN_EXPORT void* emq_plugin_create(const char* config_json, size_t config_len, char* err, size_t err_len) {
  (void)config_json, (void)config_len, (void)err, (void)err_len;
  return &state_token;
}

EMQ_PLUGIN_EXPORT int emq_plugin_handle(void* state, const emq_job* job, emq_result* out) {
  (void)state, (void)job;
  out->write_result(out->ctx, "plain", 5);
  return EMQ_PLUGIN_OK;
}

EMQ_PLUGIN_EXPORT int emq_plugin_handle_parent(void* state, const emq_job* job, const emq_child* children, size_t count,
                                               emq_result* out) {
  (void)state, (void)job;
  char head[64];
  int n = snprintf(head, sizeof head, "children=%zu", count);
  out->write_result(out->ctx, head, (size_t)n);
  for (size_t i = 0; i < count; ++i) {
    out->write_result(out->ctx, ";", 1);
    out->write_result(out->ctx, children[i].queue, children[i].queue_len);
    out->write_result(out->ctx, ":", 1);
    out->write_result(out->ctx, children[i].id, children[i].id_len);
    out->write_result(out->ctx, children[i].completed ? "=c:" : "=d:", 3);
    out->write_result(out->ctx, children[i].text, children[i].text_len);
  }
  return EMQ_PLUGIN_OK;
}

EMQ_PLUGIN_EXPORT void emq_plugin_destroy(void* state) { (void)state; }
