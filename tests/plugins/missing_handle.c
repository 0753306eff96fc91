/* The right ABI number, but emq_plugin_handle is missing. */
#include <echomq/plugin.h>

static char no_state;

EMQ_PLUGIN_EXPORT int emq_plugin_abi_version(void) { return EMQ_PLUGIN_ABI_VERSION; }

EMQ_PLUGIN_EXPORT void* emq_plugin_create(const char* config_json, size_t config_len, char* err, size_t err_len) {
  (void)config_json, (void)config_len, (void)err, (void)err_len;
  return &no_state;
}

EMQ_PLUGIN_EXPORT void emq_plugin_destroy(void* state) { (void)state; }
