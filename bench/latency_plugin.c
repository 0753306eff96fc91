/* A plugin that measures idle wake latency: each job's payload is the
 * CLOCK_MONOTONIC nanosecond its producer sent it at (emq_bench_latency_
 * producer); the first thing handle() does is read the clock, and it
 * appends "now - sent" in nanoseconds, one line per job, to the file named
 * by the queue's config `out`. So the figure spans enqueue -> the moment
 * handler code starts running: the server, the wake, the claim, the hand-off
 * to a slot thread; nothing of the handler's own work.
 *
 *   handler: { type: plugin, path: .../libemq_bench_latency.so, config: { out: /tmp/lat.txt } }
 */
#include <echomq/plugin.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct state {
  int fd;
} state;

/* The value of "out" in a flat JSON object of plain strings (no escapes in
 * the path): all the config this plugin takes. */
static int find_out(const char* json, char* path, size_t path_len) {
  const char* p = strstr(json, "\"out\"");
  if (p == NULL) return -1;
  p = strchr(p + 5, ':');
  if (p == NULL) return -1;
  p = strchr(p, '"');
  if (p == NULL) return -1;
  ++p;
  const char* end = strchr(p, '"');
  if (end == NULL || (size_t)(end - p) >= path_len) return -1;
  memcpy(path, p, (size_t)(end - p));
  path[end - p] = '\0';
  return 0;
}

EMQ_PLUGIN_EXPORT int emq_plugin_abi_version(void) { return EMQ_PLUGIN_ABI_VERSION; }

EMQ_PLUGIN_EXPORT void* emq_plugin_create(const char* config_json, size_t config_len, char* err, size_t err_len) {
  (void)config_len;
  char path[4096];
  if (find_out(config_json, path, sizeof path) != 0) {
    snprintf(err, err_len, "latency plugin: set config: { out: /path/to/file } (where to append the samples)");
    return NULL;
  }
  state* s = malloc(sizeof *s);
  if (s == NULL) {
    snprintf(err, err_len, "latency plugin: out of memory");
    return NULL;
  }
  s->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (s->fd < 0) {
    snprintf(err, err_len, "latency plugin: cannot open %s for appending", path);
    free(s);
    return NULL;
  }
  return s;
}

EMQ_PLUGIN_EXPORT int emq_plugin_handle(void* st, const emq_job* job, emq_result* out) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const long long now = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
  (void)out;

  long long sent = 0;
  for (size_t i = 0; i < job->payload_len; ++i) {
    const unsigned char c = job->payload[i];
    if (c < '0' || c > '9') return EMQ_PLUGIN_PERMANENT;
    sent = sent * 10 + (c - '0');
  }
  char line[32];
  const int n = snprintf(line, sizeof line, "%lld\n", now - sent);
  /* One short write on an O_APPEND descriptor: lines from concurrent
   * calls never interleave. */
  if (write(((state*)st)->fd, line, (size_t)n) != n) return EMQ_PLUGIN_RETRY;
  return EMQ_PLUGIN_OK;
}

EMQ_PLUGIN_EXPORT void emq_plugin_destroy(void* st) {
  state* s = st;
  close(s->fd);
  free(s);
}
