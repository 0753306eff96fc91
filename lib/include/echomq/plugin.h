/* The emqd plugin ABI: a shared library that handles jobs in-process.
 *
 * Plain C (C99 and later, and C++), so a plugin can be written in any
 * language that can export C functions. A plugin exports exactly four
 * functions, marked EMQ_PLUGIN_EXPORT:
 *
 *   int   emq_plugin_abi_version(void);
 *   void* emq_plugin_create(const char* config_json, size_t config_len,
 *                           char* err, size_t err_len);
 *   int   emq_plugin_handle(void* state, const emq_job* job, emq_result* out);
 *   void  emq_plugin_destroy(void* state);
 *
 * Life of a plugin in emqd (queue handler `type: plugin`):
 *
 *   1. dlopen(path, RTLD_NOW | RTLD_LOCAL). Every undefined symbol must
 *      resolve at once; the plugin's symbols stay private to it.
 *   2. emq_plugin_abi_version() is called before anything else. It MUST
 *      return EMQ_PLUGIN_ABI_VERSION as compiled into the plugin; emqd
 *      refuses a library that returns another number, or lacks any of the
 *      four functions (`emqd --check-config` reports both).
 *   3. emq_plugin_create() once per queue that names the library, with the
 *      queue's `config` mapping as a JSON object text (NUL-terminated, and
 *      config_len bytes long without the NUL; "{}" when none is set). It
 *      returns the plugin's state, any non-NULL pointer (a plugin without
 *      state may return the address of a static). On failure it returns
 *      NULL after writing a NUL-terminated message of at most err_len bytes
 *      (err_len >= 256) into err, saying what to fix in the config; emqd
 *      then refuses to start.
 *   4. emq_plugin_handle() once per job, from up to `concurrency` threads
 *      at once, all with the same state.
 *   5. emq_plugin_destroy(state) once, after the last handle() has
 *      returned, at shutdown; then dlclose.
 *
 * Flows (optional, same ABI number): a plugin that also exports
 *
 *   int   emq_plugin_handle_parent(void* state, const emq_job* job,
 *                                  const emq_child* children, size_t count,
 *                                  emq_result* out);
 *
 * is called through it, instead of emq_plugin_handle(), for a job that is a
 * parent (its children have finished: count >= 1, their outcomes in
 * children[0..count), valid only during the call), with the same rules and
 * return values as emq_plugin_handle(). Every other job still goes to
 * emq_plugin_handle(). A plugin without it is loaded as before, and its
 * parents run through emq_plugin_handle() without their children's
 * results. An emqd older than this header never calls it.
 *
 * Progress and traces (optional, same ABI number): a plugin that also exports
 *
 *   void  emq_plugin_host(const emq_host* host);
 *
 * is called through it once, after emq_plugin_abi_version() and before
 * emq_plugin_create(), with the daemon's table of services (emq_host,
 * below), valid until emq_plugin_destroy() has returned. Its
 * report_progress tells the daemon how far a job got, from inside
 * handle() on its thread, as often as the plugin likes; the daemon stores
 * at most 4 reports a second per job (the latest wins). A plugin without
 * the export is loaded as before. An emqd older than this header never
 * calls it: a plugin keeps the pointer NULL until it is called, and
 * reports nothing then. Read a member of the table only when
 * host->size says the daemon has it (offsetof(emq_host, member) <
 * host->size), so a plugin built against a later header runs in this one.
 *
 * What a plugin MAY do:
 *   - block in handle() (I/O, locks, sleeping): each call has a thread of
 *     its own; it costs one of the queue's slots while it lasts.
 *   - allocate with any allocator: no memory crosses the boundary. Bytes
 *     go out only through the writers in emq_result, which copy them.
 *   - keep state between calls, in the state pointer or its own globals,
 *     provided it is safe to use from several threads at once.
 *   - start threads of its own, if it stops and joins them in destroy().
 *
 * What a plugin MUST NOT do:
 *   - assume one thread: handle() runs concurrently with itself.
 *   - let a C++ exception, a longjmp or any unwinding leave a function of
 *     this ABI. (emqd catches a C++ exception thrown out of create() or
 *     handle() and fails the start or the job, but that is a last resort,
 *     and undefined behaviour for code that is not C++.)
 *   - touch signals: no signal handlers, no sigprocmask of other threads,
 *     no raise(). The daemon's signal handling depends on its mask.
 *   - fork() (the child would hold the daemon's descriptors and locks);
 *     spawning a program with posix_spawn is acceptable.
 *   - call exit(), abort(), or crash: the plugin runs inside emqd, so
 *     that ends the daemon and every job it is running. Code that may
 *     crash belongs in an `exec` or `pool` handler, behind a process
 *     boundary.
 *   - keep job, a pointer inside it, or out after handle() returns.
 *   - write to stdout (it belongs to the daemon); report through the
 *     writers, or log to stderr sparingly.
 *
 * A plugin cannot be interrupted. When a job's lease is lost, or the
 * drain timeout passes, emqd stops waiting for the answer in its books,
 * but the handle() call runs to its end and its answer is discarded. A
 * handle() that never returns holds its slot, and the daemon's exit, for
 * ever: a plugin SHOULD bound its own work (job->deadline_ms helps where
 * the queue sets a timeout).
 */
#ifndef ECHOMQ_PLUGIN_H
#define ECHOMQ_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

/* Bumped on any change to the functions or structs below; a plugin built
 * against another number is refused, never called. */
#define EMQ_PLUGIN_ABI_VERSION 1

/* What emq_plugin_handle() returns. */
#define EMQ_PLUGIN_OK 0        /* done: the result written is the job's result */
#define EMQ_PLUGIN_RETRY 1     /* failed: try again after the queue's backoff */
#define EMQ_PLUGIN_PERMANENT 2 /* failed for good: the job goes to dead at once */

/* Put before each of the four functions, so that a plugin built with
 * -fvisibility=hidden exports them and nothing else. */
#if defined(__GNUC__) || defined(__clang__)
#define EMQ_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define EMQ_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* One job, read-only, valid only during the handle() call it is passed to.
 * The strings are not NUL-terminated: use the lengths. */
typedef struct emq_job {
  const char* queue;
  size_t queue_len;
  const char* id; /* "JOB_…" */
  size_t id_len;
  const unsigned char* payload; /* bytes: any value, NUL included; NULL when payload_len is 0 */
  size_t payload_len;
  int64_t attempt;     /* 1 on the first run */
  int64_t deadline_ms; /* epoch ms by which emqd stops waiting; 0: no deadline */
} emq_job;

/* Where handle() puts its answer. The daemon owns the buffers: each writer
 * appends a copy of [bytes, bytes + len) and returns 0, or returns -1 and
 * keeps nothing more when the bytes would pass a limit (the result's is
 * the queue's max_output_bytes; the error text is cut at 4 KiB) or bytes
 * is NULL with len > 0. Call them only from inside the handle() call, on
 * its thread; ctx is the first argument of each.
 *
 *   write_result: the job's result, returned with EMQ_PLUGIN_OK (ignored
 *     otherwise). A result that passed its limit fails the job for retry.
 *   write_error: why the job failed, returned with EMQ_PLUGIN_RETRY or
 *     EMQ_PLUGIN_PERMANENT (ignored otherwise). Text, UTF-8 preferred. */
typedef struct emq_result {
  void* ctx;
  int (*write_result)(void* ctx, const void* bytes, size_t len);
  int (*write_error)(void* ctx, const char* text, size_t len);
} emq_result;

/* One finished child of a parent job, for emq_plugin_handle_parent(). The
 * strings are not NUL-terminated: use the lengths. */
typedef struct emq_child {
  const char* queue;
  size_t queue_len;
  const char* id; /* "JOB_…" */
  size_t id_len;
  int completed;             /* 1: completed, text is its result; 0: dead, text is its error */
  const unsigned char* text; /* NULL when text_len is 0 */
  size_t text_len;
} emq_child;

/* The daemon's services, for emq_plugin_host(). Members are only ever
 * added at the end; size says how many this daemon has.
 *
 *   report_progress: how far the job of the current handle() call got, as
 *     text (at most 1024 bytes; UTF-8, or JSON, preferred); ctx is that
 *     call's emq_result ctx. Returns 0 when taken, -1 when refused (longer
 *     than 1024 bytes, or text NULL with len > 0). Only from inside
 *     handle(), on its thread.
 *
 *   trace_context: the W3C trace context of the job of the current
 *     handle() call (ctx: that call's emq_result ctx), which is emqd's
 *     span of the job when the daemon traces, so that the plugin's own
 *     spans nest under it: sets *traceparent (55 characters,
 *     "00-<trace id>-<span id>-<flags>") and *tracestate to NUL-terminated
 *     text valid until handle() returns, each "" when there is none
 *     (tracing off). Returns 0, or -1 for a NULL argument. Only from
 *     inside handle(), on its thread. Added after report_progress: check
 *     host->size before reading it. */
typedef struct emq_host {
  size_t size; /* sizeof(emq_host) as the daemon was built */
  int (*report_progress)(void* ctx, const char* text, size_t len);
  int (*trace_context)(void* ctx, const char** traceparent, const char** tracestate);
} emq_host;

EMQ_PLUGIN_EXPORT int emq_plugin_abi_version(void);
EMQ_PLUGIN_EXPORT void* emq_plugin_create(const char* config_json, size_t config_len, char* err, size_t err_len);
EMQ_PLUGIN_EXPORT int emq_plugin_handle(void* state, const emq_job* job, emq_result* out);
EMQ_PLUGIN_EXPORT void emq_plugin_destroy(void* state);

/* The four functions' types, for a loader's dlsym. */
typedef int (*emq_plugin_abi_version_fn)(void);
typedef void* (*emq_plugin_create_fn)(const char* config_json, size_t config_len, char* err, size_t err_len);
typedef int (*emq_plugin_handle_fn)(void* state, const emq_job* job, emq_result* out);
typedef void (*emq_plugin_destroy_fn)(void* state);
/* The optional fifth (flows); a loader finds it with dlsym or not at all. */
typedef int (*emq_plugin_handle_parent_fn)(void* state, const emq_job* job, const emq_child* children, size_t count,
                                           emq_result* out);
/* The optional sixth (progress), found the same way. */
typedef void (*emq_plugin_host_fn)(const emq_host* host);

#ifdef __cplusplus
}
#endif

#endif /* ECHOMQ_PLUGIN_H */
