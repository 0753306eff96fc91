/* The emq module: EchoMQ's six core transitions as native commands,
 * EMQ.ENQUEUE, EMQ.CLAIM, EMQ.EXTEND, EMQ.COMPLETE, EMQ.FAIL and
 * EMQ.RELEASE, and the flow forms of settling, EMQ.COMPLETE_FLOW and
 * EMQ.FAIL_FLOW (issue 41: a child's settle is the one flow step per job),
 * each the byte-for-byte twin of its lua/ script (see PROTOCOL.md, "The
 * native module"). Load it with
 *   loadmodule /usr/local/lib/echomq/emq.so
 * on a standalone server; it refuses a cluster-enabled one. */
#include "transitions.h"

#define EMQ_MODULE_NAME "emq"
/* MODULE LIST's ver, EMQ_MODULE_VERSION: the file VERSION as
 * major * 10000 + minor * 100 + patch, defined by module/CMakeLists.txt. */

typedef struct {
  const char *name;
  RedisModuleCmdFunc func;
  const char *flags;
  uint64_t key_flags;
  const char *summary;
} EmqCommand;

static const EmqCommand kCommands[] = {
    {"emq.enqueue", emq_enqueue, "write deny-oom", REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_INSERT,
     "Admits a job to the pending set (lua/enqueue.lua)."},
    {"emq.claim", emq_claim, "write deny-oom",
     REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_ACCESS | REDISMODULE_CMD_KEY_UPDATE,
     "Promotes due delayed jobs, then leases pending jobs (lua/claim.lua)."},
    {"emq.extend", emq_extend, "write", REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_UPDATE,
     "Renews the leases of running jobs (lua/extend.lua)."},
    {"emq.complete", emq_complete, "write", REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_UPDATE,
     "Settles a job that succeeded (lua/complete.lua)."},
    {"emq.fail", emq_fail, "write", REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_UPDATE,
     "Settles a job that failed: retry or dead (lua/fail.lua)."},
    {"emq.release", emq_release, "write", REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_UPDATE,
     "Gives a running job back to pending (lua/release.lua)."},
    {"emq.complete_flow", emq_complete_flow, "write", REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_UPDATE,
     "Settles a job of a flow that succeeded (lua/complete_flow.lua)."},
    {"emq.fail_flow", emq_fail_flow, "write", REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_UPDATE,
     "Settles a job of a flow that failed: retry or dead (lua/fail_flow.lua)."},
};

static const RedisModuleCommandInfoVersion kInfoVersion = {
    1, sizeof(RedisModuleCommandHistoryEntry), sizeof(RedisModuleCommandKeySpec), sizeof(RedisModuleCommandArg)};

/* One key spec for all KEYS (the server allows one of INSERT, UPDATE and
 * DELETE per spec; these transitions move ids between keys, an update).
 * The EVALSHA shape: argv[1] is numkeys, the keys follow it one by one. */
static int register_command(RedisModuleCtx *ctx, const EmqCommand *c) {
  if (RedisModule_CreateCommand(ctx, c->name, c->func, c->flags, 0, 0, 0) != REDISMODULE_OK) return REDISMODULE_ERR;
  RedisModuleCommandKeySpec specs[2] = {{0}};
  specs[0].notes = "the transition's KEYS, as EVALSHA names them";
  specs[0].flags = c->key_flags;
  specs[0].begin_search_type = REDISMODULE_KSPEC_BS_INDEX;
  specs[0].bs.index.pos = 1;
  specs[0].find_keys_type = REDISMODULE_KSPEC_FK_KEYNUM;
  specs[0].fk.keynum.keynumidx = 0;
  specs[0].fk.keynum.firstkey = 1;
  specs[0].fk.keynum.keystep = 1;
  RedisModuleCommandInfo info = {0};
  info.version = &kInfoVersion;
  info.summary = c->summary;
  info.since = "0.1.0";
  info.arity = -3;
  info.key_specs = specs;
  return RedisModule_SetCommandInfo(RedisModule_GetCommand(ctx, c->name), &info);
}

__attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
  (void)argv;
  (void)argc;
  if (emq_bind_api(ctx) != REDISMODULE_OK) return REDISMODULE_ERR;
  if (RedisModule_IsModuleNameBusy(EMQ_MODULE_NAME)) return REDISMODULE_ERR;
  RedisModule_SetModuleAttribs(ctx, EMQ_MODULE_NAME, EMQ_MODULE_VERSION, REDISMODULE_APIVER_1);
  if (RedisModule_GetContextFlags(ctx) & REDISMODULE_CTX_FLAGS_CLUSTER) {
    RedisModule_Log(ctx, "warning",
                    "emq: refusing to load on a cluster-enabled server: the EMQ.* commands read {emq}:version "
                    "beside the queue's keys, which a cluster keeps in another slot; cluster deployments run the "
                    "scripted executor (valkey.executor: scripted or auto)");
    return REDISMODULE_ERR;
  }
  /* A key opened for writing is not thereby modified (a fenced transition
   * whose lease is lost writes nothing): each write signals its key. */
  RedisModule_SetModuleOptions(ctx, REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED);
  if (emq_create_words() != REDISMODULE_OK) return REDISMODULE_ERR;
  for (size_t i = 0; i < sizeof kCommands / sizeof kCommands[0]; ++i) {
    if (register_command(ctx, &kCommands[i]) != REDISMODULE_OK) {
      RedisModule_Log(ctx, "warning", "emq: could not register %s", kCommands[i].name);
      return REDISMODULE_ERR;
    }
  }
  return REDISMODULE_OK;
}

/* Valkey looks for this name first; the same entry, so that Valkey does not
 * log the module as a legacy Redis module. */
__attribute__((visibility("default"))) int ValkeyModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv,
                                                               int argc) {
  return RedisModule_OnLoad(ctx, argv, argc);
}
