/* A no-op plugin that keeps the fault suite's ledger: one line per job it
 * handles, "<job id> <attempt> <daemon>", appended with one write(2) to an
 * O_APPEND file, so lines from concurrent calls (and from other daemons on
 * the same file) never interleave. The tests count runs from it, as they do
 * from the exec handlers' ledger.
 *
 *   handler: { type: plugin, path: .../libemq_fault_ledger.so,
 *              config: { ledger: /tmp/x/ledger.txt, daemon: a } }
 */
#include <echomq/plugin.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct ledger {
  int fd;
  char daemon[64];
} ledger;

/* The string value of "key" in a flat JSON object of plain strings (what
 * emqd hands over for a config of scalars). Good enough for a test plugin;
 * not a JSON parser. */
static int json_string(const char* json, const char* key, char* out, size_t out_len) {
  char quoted[80];
  const char* at;
  size_t n = 0;
  snprintf(quoted, sizeof quoted, "\"%s\"", key);
  at = strstr(json, quoted);
  if (at == NULL) return -1;
  at = strchr(at + strlen(quoted), ':');
  if (at == NULL) return -1;
  at = strchr(at, '"');
  if (at == NULL) return -1;
  for (++at; *at != '\0' && *at != '"' && n + 1 < out_len; ++at) out[n++] = *at;
  out[n] = '\0';
  return *at == '"' ? 0 : -1;
}

EMQ_PLUGIN_EXPORT int emq_plugin_abi_version(void) { return EMQ_PLUGIN_ABI_VERSION; }

EMQ_PLUGIN_EXPORT void* emq_plugin_create(const char* config_json, size_t config_len, char* err, size_t err_len) {
  char path[4096];
  ledger* l;
  (void)config_len;
  if (json_string(config_json, "ledger", path, sizeof path) != 0) {
    snprintf(err, err_len, "config: expected ledger: <path of the ledger file>");
    return NULL;
  }
  l = calloc(1, sizeof *l);
  if (l == NULL) {
    snprintf(err, err_len, "out of memory");
    return NULL;
  }
  if (json_string(config_json, "daemon", l->daemon, sizeof l->daemon) != 0) strcpy(l->daemon, "-");
  l->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (l->fd < 0) {
    snprintf(err, err_len, "cannot open the ledger %s", path);
    free(l);
    return NULL;
  }
  return l;
}

EMQ_PLUGIN_EXPORT int emq_plugin_handle(void* state, const emq_job* job, emq_result* out) {
  const ledger* l = state;
  char line[512];
  int n = snprintf(line, sizeof line, "%.*s %lld %s\n", (int)job->id_len, job->id, (long long)job->attempt, l->daemon);
  if (n <= 0 || (size_t)n >= sizeof line || write(l->fd, line, (size_t)n) != n) {
    static const char why[] = "cannot write the ledger";
    out->write_error(out->ctx, why, sizeof why - 1);
    return EMQ_PLUGIN_RETRY;
  }
  return EMQ_PLUGIN_OK;
}

EMQ_PLUGIN_EXPORT void emq_plugin_destroy(void* state) {
  ledger* l = state;
  close(l->fd);
  free(l);
}
