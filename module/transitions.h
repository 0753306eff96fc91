/* The EMQ.* commands, one file each, registered by emq.c. Each is the
 * native twin of its lua/<name>.lua, whose header is the contract (KEYS,
 * ARGV, replies, errors) the command follows byte for byte. */
#ifndef EMQ_TRANSITIONS_H
#define EMQ_TRANSITIONS_H

#include "call.h"
#include "rows.h"
#include "words.h"
#include "writes.h"

int emq_enqueue(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int emq_claim(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int emq_extend(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int emq_complete(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int emq_fail(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int emq_complete_flow(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int emq_fail_flow(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int emq_release(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

#endif
