/* The six EMQ.* commands, one file each, registered by emq.c. */
#ifndef EMQ_TRANSITIONS_H
#define EMQ_TRANSITIONS_H

#include "shared.h"

int emq_enqueue(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int emq_claim(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int emq_extend(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int emq_complete(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int emq_fail(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int emq_release(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

#endif
