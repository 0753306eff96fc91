/* create() refuses its config cleanly: NULL, with a message that names
 * the config it was given. */
#include <echomq/plugin.h>

#include <stdio.h>

EMQ_PLUGIN_EXPORT int emq_plugin_abi_version(void) { return EMQ_PLUGIN_ABI_VERSION; }

EMQ_PLUGIN_EXPORT void* emq_plugin_create(const char* config_json, size_t config_len, char* err, size_t err_len) {
  snprintf(err, err_len, "create_fails wants a \"threshold\" key; got %.*s", (int)config_len, config_json);
  return NULL;
}

EMQ_PLUGIN_EXPORT int emq_plugin_handle(void* state, const emq_job* job, emq_result* out) {
  (void)state, (void)job, (void)out;
  return EMQ_PLUGIN_OK;
}

EMQ_PLUGIN_EXPORT void emq_plugin_destroy(void* state) { (void)state; }
