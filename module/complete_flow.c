/* EMQ.COMPLETE_FLOW: the native twin of lua/complete_flow.lua. That
 * script's header is the contract; this file follows it byte for byte, on
 * the server's keys, without Lua. It is EMQ.COMPLETE (settle.h's steps)
 * and: a child (a row with parent) is kept, state completed with its
 * result and no expiry whatever keep_ms, and its id goes to the outbox; a
 * parent (a row with children) has run, and its deps and results go.
 *
 *   KEYS   row, active, stats, outbox, deps root (emq:{q}:deps:), results
 *          root (emq:{q}:results:), the uniq root (optional), and the
 *          events stream (optional, last)
 *   ARGV   id, lease_epoch, keep_ms, result, and with the stream its length
 *   Reply  1 done, 0 lease lost (nothing changes); EMQKIND, EMQARG,
 *          WRONGTYPE (a child's outbox or the stream of another type),
 *          and the module's own EMQLAYOUT and EMQWIRE
 *
 * Where the C differs in how, not what: a parent's deps and results, keys
 * built from the roots, are checked against the caller's ACL before
 * anything is written (the script would stop at its DEL, after the rest). */
#include "settle.h"
#include "transitions.h"

static const EmqKeyRole kRoles[] = {EMQ_KEY_ROW,    EMQ_KEY_ACTIVE,    EMQ_KEY_STATS,
                                    EMQ_KEY_OUTBOX, EMQ_KEY_DEPS_ROOT, EMQ_KEY_RESULTS_ROOT};
static const EmqTransition kCompleteFlow = {"EMQ.COMPLETE_FLOW",
                                            kRoles,
                                            6,
                                            2,
                                            1,
                                            {EMQ_KEY_GQ_ROOT, EMQ_KEY_GRP_ROOT, EMQ_KEY_GACT_ROOT, EMQ_KEY_GIDX,
                                             EMQ_KEY_ROT, EMQ_KEY_GROUPS, EMQ_KEY_GWAIT, EMQ_KEY_UNIQ_ROOT},
                                            8};

int emq_complete_flow(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
  EmqCompletion c;
  if (!emq_completion_open(ctx, argv, argc, &kCompleteFlow, &c)) return REDISMODULE_OK;
  RedisModuleString *outbox_name = c.call.keys[3];
  const int child = emq_hget(c.row, EMQ_WORD_PARENT) != NULL;
  const int parent = emq_hget(c.row, EMQ_WORD_CHILDREN) != NULL;
  /* A child's id goes to the outbox after it leaves active: a ZADD failing
   * there would strand it, so the outbox is checked first. */
  RedisModuleKey *outbox = NULL;
  if (child) {
    outbox = emq_open_write(ctx, outbox_name);
    if (!emq_require_type(ctx, outbox, REDISMODULE_KEYTYPE_ZSET)) return REDISMODULE_OK;
  }
  RedisModuleString *spent[2];
  if (parent) {
    spent[0] = emq_row_key(ctx, c.call.keys[4], c.id);
    spent[1] = emq_row_key(ctx, c.call.keys[5], c.id);
    if (!emq_may_touch_rows(ctx, kCompleteFlow.name, spent, 2, REDISMODULE_CMD_KEY_DELETE)) return REDISMODULE_OK;
  }

  emq_zrem(ctx, c.active, c.active_name, c.id);
  if (child) {
    emq_completion_keep(ctx, &c);
    emq_persist(ctx, c.row, c.row_name);
    /* One clock for the call, as the script reads TIME once. */
    const mstime_t now = emq_now_ms();
    emq_groups_set_now(&c.groups, now);
    emq_zadd(ctx, outbox, outbox_name, (double)now, c.id, 0);
  } else {
    emq_completion_settle_row(ctx, &c);
  }
  if (!emq_completion_group(ctx, &c)) return REDISMODULE_OK;
  emq_completion_release(ctx, &c);
  emq_completion_emit(ctx, &c);
  if (parent) emq_del_keys(ctx, spent, 2);
  return emq_completion_finish(ctx, &c, "complete_flow");
}
