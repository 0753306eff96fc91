/* A queue's pause from meta: see pause.h. */
#include "pause.h"

#include <stdio.h>

#include "lua_numbers.h"
#include "rows.h"
#include "writes.h"

#define MAX_UNTIL 1000000000000000LL

EmqPause emq_read_pause(RedisModuleCtx *ctx, RedisModuleKey *meta, RedisModuleString *meta_name, mstime_t now) {
  if (!emq_bytes_equal(emq_hget(meta, EMQ_WORD_PAUSED), "1", 1)) return EMQ_PAUSE_NONE;
  RedisModuleString *until = NULL;
  RedisModule_HashGet(meta, REDISMODULE_HASH_CFIELDS, "paused_until", &until, NULL);
  if (until == NULL) return EMQ_PAUSE_HOLDS;
  size_t len;
  const char *s = RedisModule_StringPtrLen(until, &len);
  long long until_ms;
  if (!emq_is_counter(s, len, &until_ms) || until_ms < 0 || until_ms > MAX_UNTIL) {
    size_t mlen;
    const char *m = RedisModule_StringPtrLen(meta_name, &mlen);
    char text[512];
    snprintf(text, sizeof text,
             "EMQARG %.*s paused_until must be an integer in 0..1000000000000000 (resume the queue, or pause it "
             "again)",
             (int)mlen, m);
    RedisModule_ReplyWithError(ctx, text);
    return EMQ_PAUSE_REFUSED;
  }
  return until_ms > (long long)now ? EMQ_PAUSE_HOLDS : EMQ_PAUSE_OVER;
}

void emq_lift_pause(RedisModuleCtx *ctx, RedisModuleKey *meta, RedisModuleString *meta_name) {
  const int f = REDISMODULE_HASH_CFIELDS;
  RedisModuleString *gone = REDISMODULE_HASH_DELETE;
  RedisModule_HashSet(meta, f, "paused", gone, "paused_by", gone, "paused_reason", gone, "paused_until", gone, NULL);
  emq_changed(ctx, REDISMODULE_NOTIFY_HASH, "hdel", meta_name);
  /* HDEL ends with a "del" event when it empties the hash (the module API
   * deletes the empty key without one). */
  if (RedisModule_KeyType(meta) == REDISMODULE_KEYTYPE_EMPTY) {
    RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_GENERIC, "del", meta_name);
  }
  RedisModule_Replicate(ctx, "HDEL", "scccc", meta_name, "paused", "paused_by", "paused_reason", "paused_until");
}
