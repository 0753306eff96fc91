/* A plugin built for another ABI number: the loader must refuse it
 * without calling anything but emq_plugin_abi_version. */
#include <echomq/plugin.h>

#include <stdlib.h>

EMQ_PLUGIN_EXPORT int emq_plugin_abi_version(void) { return EMQ_PLUGIN_ABI_VERSION + 1; }

EMQ_PLUGIN_EXPORT void* emq_plugin_create(const char* config_json, size_t config_len, char* err, size_t err_len) {
  (void)config_json, (void)config_len, (void)err, (void)err_len;
  abort(); /* never called */
}

EMQ_PLUGIN_EXPORT int emq_plugin_handle(void* state, const emq_job* job, emq_result* out) {
  (void)state, (void)job, (void)out;
  abort();
}

EMQ_PLUGIN_EXPORT void emq_plugin_destroy(void* state) {
  (void)state;
  abort();
}
