/* Links against a function nothing defines: with RTLD_NOW the loader must
 * fail at load time, not at the first job. */
#include <echomq/plugin.h>

int emq_test_no_such_function(void);

static char no_state;

EMQ_PLUGIN_EXPORT int emq_plugin_abi_version(void) { return EMQ_PLUGIN_ABI_VERSION; }

EMQ_PLUGIN_EXPORT void* emq_plugin_create(const char* config_json, size_t config_len, char* err, size_t err_len) {
  (void)config_json, (void)config_len, (void)err, (void)err_len;
  return &no_state;
}

EMQ_PLUGIN_EXPORT int emq_plugin_handle(void* state, const emq_job* job, emq_result* out) {
  (void)state, (void)job, (void)out;
  return emq_test_no_such_function();
}

EMQ_PLUGIN_EXPORT void emq_plugin_destroy(void* state) { (void)state; }
