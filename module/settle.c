/* The steps complete and fail share with their flow forms: see settle.h. */
#include "settle.h"

#include "unique.h"

#define EMQ_MAX_ERROR 4096

int emq_completion_open(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const EmqTransition *t,
                        EmqCompletion *c) {
  if (!emq_begin(ctx, argv, argc, t, &c->call)) return 0;
  if (emq_groups_begin(ctx, &c->call, t, &c->groups, NULL) < 0) return 0;
  c->row_name = c->call.keys[0];
  c->active_name = c->call.keys[1];
  c->stats_name = c->call.keys[2];
  c->id = c->call.args[0];
  if (!emq_job_id_arg(&c->call, 1) ||
      !emq_int_arg(&c->call, 3, 0, 0, EMQ_MAX_MS, "EMQARG keep_ms must be an integer in 0..1000000000000",
                   &c->keep_ms)) {
    return 0;
  }
  c->row = emq_open_held_row(ctx, c->row_name, c->call.args[1]);
  if (c->row == NULL) return 0;
  c->active = emq_open_write(ctx, c->active_name);
  if (!emq_require_type(ctx, c->active, REDISMODULE_KEYTYPE_ZSET)) return 0;
  c->stats = emq_open_write(ctx, c->stats_name);
  c->counted = emq_stats_counter(c->stats, EMQ_WORD_COMPLETED, &c->completed);
  c->attempts = emq_hget(c->row, EMQ_WORD_ATTEMPTS);
  c->uniq_root = emq_optional_key(&c->call, t, EMQ_KEY_UNIQ_ROOT);
  c->unique = emq_hget(c->row, EMQ_WORD_UNIQUE);
  c->unique_mode = emq_hget(c->row, EMQ_WORD_UNIQUE_MODE);
  c->groups.active = c->active;
  c->group = emq_group_of(&c->groups, emq_hget(c->row, EMQ_WORD_GROUP));
  return !c->groups.refused;
}

void emq_completion_keep(RedisModuleCtx *ctx, const EmqCompletion *c) {
  const EmqWord fields[] = {EMQ_WORD_STATE, EMQ_WORD_RESULT};
  /* Given the stream, the result is ARGV[4] only when N follows it, as
   * num_args counts. */
  RedisModuleString *values[] = {emq_word(EMQ_WORD_COMPLETED),
                                 c->call.num_args >= 4 ? c->call.args[3] : emq_word(EMQ_WORD_EMPTY)};
  emq_hset(ctx, c->row, c->row_name, 2, fields, values);
}

void emq_completion_settle_row(RedisModuleCtx *ctx, const EmqCompletion *c) {
  if (c->keep_ms == 0) {
    emq_del(ctx, c->row, c->row_name);
    return;
  }
  emq_completion_keep(ctx, c);
  emq_pexpire(ctx, c->row, c->row_name, emq_now_ms() + (mstime_t)c->keep_ms);
}

int emq_completion_group(RedisModuleCtx *ctx, EmqCompletion *c) {
  (void)ctx;
  if (c->group != NULL) emq_group_out(&c->groups, c->group, c->id);
  return !c->groups.refused;
}

void emq_completion_release(RedisModuleCtx *ctx, const EmqCompletion *c) {
  emq_release_key(ctx, c->uniq_root, c->id, c->unique, c->unique_mode);
}

void emq_completion_emit(RedisModuleCtx *ctx, const EmqCompletion *c) {
  emq_emit(ctx, &c->call.events, EMQ_WORD_COMPLETED, c->id, c->attempts, NULL);
}

int emq_completion_finish(RedisModuleCtx *ctx, const EmqCompletion *c, const char *who) {
  emq_count(ctx, c->stats, c->stats_name, EMQ_WORD_COMPLETED, c->counted, c->completed, 1, who);
  return RedisModule_ReplyWithLongLong(ctx, 1);
}

/* fail's arguments after the id, as its script checks them. */
static int failure_args(EmqCall *call, double *max_attempts, double *backoff_ms, int *permanent) {
  if (!emq_int_arg(call, 4, 0, 1, EMQ_MAX_BATCH, "EMQARG max_attempts must be an integer in 1..1000000",
                   max_attempts) ||
      !emq_int_arg(call, 5, 0, 0, EMQ_MAX_MS, "EMQARG backoff_ms must be an integer in 0..1000000000000", backoff_ms)) {
    return 0;
  }
  size_t len;
  const char *p = emq_arg(call, 6, &len);
  if (p == NULL || len != 1 || (p[0] != '0' && p[0] != '1')) {
    emq_reply_error(call->ctx, "EMQARG permanent must be 0 or 1");
    return 0;
  }
  *permanent = p[0] == '1';
  return 1;
}

/* The row's attempts, failures and lane, refused by name when malformed;
 * 0 once it has replied. */
static int failure_row(RedisModuleCtx *ctx, EmqFailure *f, long long *attempts, double *lane) {
  if (!emq_row_field_counter(f->row, EMQ_WORD_ATTEMPTS, attempts)) {
    emq_reply_malformed(ctx, f->row_name, EMQ_WORD_ATTEMPTS, EMQ_RULE_COUNTER);
    return 0;
  }
  if (!emq_row_field_counter(f->row, EMQ_WORD_FAILURES, &f->failures)) {
    emq_reply_malformed(ctx, f->row_name, EMQ_WORD_FAILURES, EMQ_RULE_COUNTER);
    return 0;
  }
  if (!emq_row_lane(f->row, lane)) {
    emq_reply_malformed(ctx, f->row_name, EMQ_WORD_LANE, EMQ_RULE_LANE);
    return 0;
  }
  return 1;
}

/* Where the job goes. Only that set and active are checked, as the script
 * checks them: the others are not touched, whatever they hold. */
static void failure_target(EmqFailure *f, int dies, double backoff_ms, double lane) {
  RedisModuleString **keys = f->call.keys;
  f->dies = dies;
  f->counter_field = dies ? EMQ_WORD_DEAD : EMQ_WORD_RETRIED;
  f->state = EMQ_WORD_PENDING;
  f->target_name = keys[3];
  f->score = lane;
  if (dies) {
    f->state = EMQ_WORD_DEAD;
    f->target_name = keys[4];
    f->score = (double)f->now;
  } else if (backoff_ms > 0) {
    f->state = EMQ_WORD_DELAYED;
    f->target_name = keys[2];
    f->score = (double)f->now + backoff_ms;
  }
}

int emq_failure_open(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const EmqTransition *t, EmqFailure *f) {
  if (!emq_begin(ctx, argv, argc, t, &f->call)) return 0;
  if (emq_groups_begin(ctx, &f->call, t, &f->groups, NULL) < 0) return 0;
  f->row_name = f->call.keys[0];
  f->active_name = f->call.keys[1];
  f->stats_name = f->call.keys[5];
  f->id = f->call.args[0];
  double max_attempts, backoff_ms, lane;
  int permanent;
  long long attempts;
  if (!emq_job_id_arg(&f->call, 1) || !failure_args(&f->call, &max_attempts, &backoff_ms, &permanent)) return 0;
  f->row = emq_open_held_row(ctx, f->row_name, f->call.args[1]);
  if (f->row == NULL || !failure_row(ctx, f, &attempts, &lane)) return 0;
  f->now = emq_now_ms();
  emq_groups_set_now(&f->groups, f->now);
  failure_target(f, permanent || (double)attempts >= max_attempts, backoff_ms, lane);
  f->active = emq_open_write(ctx, f->active_name);
  f->target = emq_open_write(ctx, f->target_name);
  if (!emq_require_type(ctx, f->target, REDISMODULE_KEYTYPE_ZSET) ||
      !emq_require_type(ctx, f->active, REDISMODULE_KEYTYPE_ZSET)) {
    return 0;
  }
  f->stats = emq_open_write(ctx, f->stats_name);
  f->counted = emq_stats_counter(f->stats, f->counter_field, &f->counter);
  f->groups.active = f->active;
  f->group = emq_group_of(&f->groups, emq_hget(f->row, EMQ_WORD_GROUP));
  if (f->groups.refused) return 0;
  size_t len;
  const char *err = emq_arg(&f->call, 3, &len);
  f->error = RedisModule_CreateString(ctx, err ? err : "", len > EMQ_MAX_ERROR ? EMQ_MAX_ERROR : len);
  f->uniq_root = emq_optional_key(&f->call, t, EMQ_KEY_UNIQ_ROOT);
  f->unique = emq_hget(f->row, EMQ_WORD_UNIQUE);
  f->unique_mode = emq_hget(f->row, EMQ_WORD_UNIQUE_MODE);
  return 1;
}

void emq_failure_settle(RedisModuleCtx *ctx, const EmqFailure *f) {
  emq_zrem(ctx, f->active, f->active_name, f->id);
  emq_hincrby(ctx, f->row, f->row_name, EMQ_WORD_FAILURES, f->failures, 1);
  const EmqWord field = EMQ_WORD_ERROR;
  RedisModuleString *error = f->error;
  emq_hset(ctx, f->row, f->row_name, 1, &field, &error);
  emq_set_state(ctx, f->row, f->row_name, f->state);
  if (f->group == NULL || f->state != EMQ_WORD_PENDING) emq_zadd(ctx, f->target, f->target_name, f->score, f->id, 0);
}

int emq_failure_group(RedisModuleCtx *ctx, EmqFailure *f) {
  (void)ctx;
  if (f->group == NULL) return 1;
  if (f->state == EMQ_WORD_PENDING) {
    emq_group_to(&f->groups, f->group, f->id, f->score);
  } else {
    emq_group_out(&f->groups, f->group, f->id);
  }
  return !f->groups.refused;
}

int emq_failure_finish(RedisModuleCtx *ctx, const EmqFailure *f, const char *who) {
  if (f->dies) emq_release_key(ctx, f->uniq_root, f->id, f->unique, f->unique_mode);
  emq_emit(ctx, &f->call.events, f->state, f->id, emq_hget(f->row, EMQ_WORD_ATTEMPTS), f->error);
  emq_count(ctx, f->stats, f->stats_name, f->counter_field, f->counted, f->counter, 1, who);
  return RedisModule_ReplyWithLongLong(ctx, f->dies ? 2 : 1);
}
