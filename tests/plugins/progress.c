/* A plugin that reports progress through the host table (emq_plugin_host):
 * "one" at once, then "two" once the file <dir>/after exists, then its
 * result "done" once <dir>/go exists; dir is its config's only string,
 * {"dir": "/path"}. Without the host table (an older emqd) it reports
 * nothing and still finishes. */
#include <echomq/plugin.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const emq_host* host;
static char dir[512];

EMQ_PLUGIN_EXPORT int emq_plugin_abi_version(void) { return EMQ_PLUGIN_ABI_VERSION; }

EMQ_PLUGIN_EXPORT void emq_plugin_host(const emq_host* h) { host = h; }

EMQ_PLUGIN_EXPORT void* emq_plugin_create(const char* config_json, size_t config_len, char* err, size_t err_len) {
  (void)config_len;
  const char* key = strstr(config_json, "\"dir\":\"");
  const char* start = key ? key + 7 : NULL;
  const char* end = start ? strchr(start, '"') : NULL;
  if (end == NULL || (size_t)(end - start) >= sizeof dir) {
    snprintf(err, err_len, "config must be {\"dir\": \"/path\"}");
    return NULL;
  }
  memcpy(dir, start, (size_t)(end - start));
  return dir;
}

static void report(emq_result* out, const char* text) {
  if (host != NULL && host->size > offsetof(emq_host, report_progress)) {
    host->report_progress(out->ctx, text, strlen(text));
  }
}

static void wait_for_file(const char* name) {
  char path[600];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  const struct timespec tick = {0, 10 * 1000 * 1000};
  while (access(path, F_OK) != 0) nanosleep(&tick, NULL);
}

EMQ_PLUGIN_EXPORT int emq_plugin_handle(void* state, const emq_job* job, emq_result* out) {
  (void)state, (void)job;
  report(out, "one");
  wait_for_file("after");
  report(out, "two");
  wait_for_file("go");
  out->write_result(out->ctx, "done", 4);
  return EMQ_PLUGIN_OK;
}

EMQ_PLUGIN_EXPORT void emq_plugin_destroy(void* state) { (void)state; }
