/* The smallest emqd plugin: completes every job with an empty result.
 * The benchmarks' baseline: what a job costs through the plugin path
 * itself, with no work in it.
 *
 *   queues:
 *     - name: noop
 *       handler: { type: plugin, path: /usr/lib/echomq/plugins/libemq_noop.so }
 */
#include <echomq/plugin.h>

/* No state: any non-NULL pointer will do. */
static char no_state;

EMQ_PLUGIN_EXPORT int emq_plugin_abi_version(void) { return EMQ_PLUGIN_ABI_VERSION; }

EMQ_PLUGIN_EXPORT void* emq_plugin_create(const char* config_json, size_t config_len, char* err, size_t err_len) {
  (void)config_json;
  (void)config_len;
  (void)err;
  (void)err_len;
  return &no_state;
}

EMQ_PLUGIN_EXPORT int emq_plugin_handle(void* state, const emq_job* job, emq_result* out) {
  (void)state;
  (void)job;
  (void)out;
  return EMQ_PLUGIN_OK;
}

EMQ_PLUGIN_EXPORT void emq_plugin_destroy(void* state) { (void)state; }
