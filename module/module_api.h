/* The part of the server's module API that the emq module uses, declared
 * from the documented API (the Valkey/Redis "Modules API reference"): the
 * function names and signatures, the handful of constants, and the layout
 * of the command-info structs that SetCommandInfo reads.
 *
 * The module binds the RedisModule_ names. Valkey 8 registers every API
 * function under both ValkeyModule_ and RedisModule_; Valkey 7.2 and
 * Redis 7 know only RedisModule_. One binary loads on all of them. */
#ifndef EMQ_MODULE_API_H
#define EMQ_MODULE_API_H

#include <stddef.h>
#include <stdint.h>

typedef struct RedisModuleCtx RedisModuleCtx;
typedef struct RedisModuleKey RedisModuleKey;
typedef struct RedisModuleString RedisModuleString;
typedef struct RedisModuleCommand RedisModuleCommand;
typedef struct RedisModuleUser RedisModuleUser;
typedef struct RedisModuleCallReply RedisModuleCallReply;
typedef long long mstime_t;
typedef int (*RedisModuleCmdFunc)(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

#define REDISMODULE_OK 0
#define REDISMODULE_ERR 1
#define REDISMODULE_APIVER_1 1

#define REDISMODULE_READ (1 << 0)
#define REDISMODULE_WRITE (1 << 1)

#define REDISMODULE_KEYTYPE_EMPTY 0
#define REDISMODULE_KEYTYPE_STRING 1
#define REDISMODULE_KEYTYPE_LIST 2
#define REDISMODULE_KEYTYPE_HASH 3
#define REDISMODULE_KEYTYPE_ZSET 5
#define REDISMODULE_KEYTYPE_STREAM 7

#define REDISMODULE_POSTPONED_LEN -1
/* GetAbsExpire's answer for a key without an expiry; SetAbsExpire's
 * argument that removes one. */
#define REDISMODULE_NO_EXPIRE -1

#define REDISMODULE_ZADD_XX (1 << 0)
#define REDISMODULE_ZADD_ADDED (1 << 2)
#define REDISMODULE_ZADD_UPDATED (1 << 3)

#define REDISMODULE_LIST_HEAD 0
#define REDISMODULE_LIST_TAIL 1

#define REDISMODULE_HASH_NONE 0
#define REDISMODULE_HASH_CFIELDS (1 << 2)
/* HashSet's value that deletes the field (HDEL). */
#define REDISMODULE_HASH_DELETE ((RedisModuleString *)(long)1)

#define REDISMODULE_CTX_FLAGS_CLUSTER (1 << 5)

/* SetModuleOptions: CloseKey does not signal a key opened for writing as
 * modified; the module calls SignalModifiedKey on the keys it changes. */
#define REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED (1 << 1)

#define REDISMODULE_NOTIFY_GENERIC (1 << 2) /* g: del, expire */
#define REDISMODULE_NOTIFY_LIST (1 << 4)    /* l */
#define REDISMODULE_NOTIFY_HASH (1 << 6)    /* h */
#define REDISMODULE_NOTIFY_ZSET (1 << 7)    /* z */
#define REDISMODULE_NOTIFY_STREAM (1 << 10) /* t */

/* StreamAdd: the server picks the entry's id, as XADD's "*" does. */
#define REDISMODULE_STREAM_ADD_AUTOID (1 << 0)
/* StreamTrimByLength: whole nodes only, as XADD's "MAXLEN ~" trims. */
#define REDISMODULE_STREAM_TRIM_APPROX (1 << 0)
typedef struct {
  uint64_t ms;
  uint64_t seq;
} RedisModuleStreamID;

/* ACLAddLogEntry's reason: a key the user may not touch (ACL LOG shows
 * "key"). */
#define REDISMODULE_ACL_LOG_KEY 2
/* Key-spec flags (COMMAND INFO, ACL key permissions). */
#define REDISMODULE_CMD_KEY_RO (1ULL << 0)
#define REDISMODULE_CMD_KEY_RW (1ULL << 1)
#define REDISMODULE_CMD_KEY_ACCESS (1ULL << 4)
#define REDISMODULE_CMD_KEY_UPDATE (1ULL << 5)
#define REDISMODULE_CMD_KEY_INSERT (1ULL << 6)
#define REDISMODULE_CMD_KEY_DELETE (1ULL << 7)

typedef enum {
  REDISMODULE_KSPEC_BS_INVALID = 0,
  REDISMODULE_KSPEC_BS_UNKNOWN,
  REDISMODULE_KSPEC_BS_INDEX,
  REDISMODULE_KSPEC_BS_KEYWORD
} RedisModuleKeySpecBeginSearchType;

typedef enum {
  REDISMODULE_KSPEC_FK_OMITTED = 0,
  REDISMODULE_KSPEC_FK_UNKNOWN,
  REDISMODULE_KSPEC_FK_RANGE,
  REDISMODULE_KSPEC_FK_KEYNUM
} RedisModuleKeySpecFindKeysType;

/* Version 1 of the command-info layout. The server walks key_specs with
 * the sizes given in the version struct, so these must be the documented
 * layouts field for field. */
typedef struct {
  const char *notes;
  uint64_t flags;
  RedisModuleKeySpecBeginSearchType begin_search_type;
  union {
    struct {
      int pos;
    } index;
    struct {
      const char *keyword;
      int startfrom;
    } keyword;
  } bs;
  RedisModuleKeySpecFindKeysType find_keys_type;
  union {
    struct {
      int lastkey;
      int keystep;
      int limit;
    } range;
    struct {
      int keynumidx;
      int firstkey;
      int keystep;
    } keynum;
  } fk;
} RedisModuleCommandKeySpec;

typedef struct {
  const char *since;
  const char *changes;
} RedisModuleCommandHistoryEntry;

typedef struct RedisModuleCommandArg {
  const char *name;
  int type;
  int key_spec_index;
  const char *token;
  const char *summary;
  const char *since;
  int flags;
  const char *deprecated_since;
  struct RedisModuleCommandArg *subargs;
  const char *display_text;
} RedisModuleCommandArg;

typedef struct {
  int version;
  size_t sizeof_historyentry;
  size_t sizeof_keyspec;
  size_t sizeof_arg;
} RedisModuleCommandInfoVersion;

typedef struct {
  const RedisModuleCommandInfoVersion *version;
  const char *summary;
  const char *complexity;
  const char *since;
  RedisModuleCommandHistoryEntry *history;
  const char *tips;
  int arity;
  RedisModuleCommandKeySpec *key_specs;
  RedisModuleCommandArg *args;
} RedisModuleCommandInfo;

/* The function pointers, filled by emq_bind_api() from the lookup the
 * server passes in the load context. EMQ_API lists them once; module_api.c
 * defines them and binds them from the same list. */
#define EMQ_API(X)                                                                                                  \
  X(void, SetModuleAttribs, (RedisModuleCtx * ctx, const char *name, int ver, int apiver))                          \
  X(int, IsModuleNameBusy, (const char *name))                                                                      \
  X(int, CreateCommand,                                                                                             \
    (RedisModuleCtx * ctx, const char *name, RedisModuleCmdFunc cmdfunc, const char *strflags, int firstkey,        \
     int lastkey, int keystep))                                                                                     \
  X(RedisModuleCommand *, GetCommand, (RedisModuleCtx * ctx, const char *name))                                     \
  X(int, SetCommandInfo, (RedisModuleCommand * command, const RedisModuleCommandInfo *info))                        \
  X(int, GetContextFlags, (RedisModuleCtx * ctx))                                                                   \
  X(void, SetModuleOptions, (RedisModuleCtx * ctx, int options))                                                    \
  X(void, Log, (RedisModuleCtx * ctx, const char *level, const char *fmt, ...))                                     \
  X(void, AutoMemory, (RedisModuleCtx * ctx))                                                                       \
  X(void *, PoolAlloc, (RedisModuleCtx * ctx, size_t bytes))                                                        \
  X(void *, Alloc, (size_t bytes))                                                                                  \
  X(void, Free, (void *ptr))                                                                                        \
  X(int, WrongArity, (RedisModuleCtx * ctx))                                                                        \
  X(int, ReplyWithError, (RedisModuleCtx * ctx, const char *err))                                                   \
  X(int, ReplyWithLongLong, (RedisModuleCtx * ctx, long long ll))                                                   \
  X(int, ReplyWithArray, (RedisModuleCtx * ctx, long len))                                                          \
  X(void, ReplySetArrayLength, (RedisModuleCtx * ctx, long len))                                                    \
  X(int, ReplyWithString, (RedisModuleCtx * ctx, RedisModuleString * str))                                          \
  X(int, ReplyWithStringBuffer, (RedisModuleCtx * ctx, const char *buf, size_t len))                                \
  X(RedisModuleString *, CreateString, (RedisModuleCtx * ctx, const char *ptr, size_t len))                         \
  X(const char *, StringPtrLen, (const RedisModuleString *str, size_t *len))                                        \
  X(RedisModuleKey *, OpenKey, (RedisModuleCtx * ctx, RedisModuleString * keyname, int mode))                       \
  X(void, CloseKey, (RedisModuleKey * key))                                                                         \
  X(int, KeyType, (RedisModuleKey * key))                                                                           \
  X(size_t, ValueLength, (RedisModuleKey * key))                                                                    \
  X(int, DeleteKey, (RedisModuleKey * key))                                                                         \
  X(int, SetAbsExpire, (RedisModuleKey * key, mstime_t expire))                                                     \
  X(mstime_t, GetAbsExpire, (RedisModuleKey * key))                                                                 \
  X(char *, StringDMA, (RedisModuleKey * key, size_t * len, int mode))                                              \
  X(int, HashSet, (RedisModuleKey * key, int flags, ...))                                                           \
  X(int, HashGet, (RedisModuleKey * key, int flags, ...))                                                           \
  X(int, ZsetAdd, (RedisModuleKey * key, double score, RedisModuleString *ele, int *flagsptr))                      \
  X(int, ZsetRem, (RedisModuleKey * key, RedisModuleString * ele, int *deleted))                                    \
  X(int, ZsetScore, (RedisModuleKey * key, RedisModuleString * ele, double *score))                                 \
  X(int, ZsetIncrby, (RedisModuleKey * key, double score, RedisModuleString *ele, int *flagsptr, double *newscore)) \
  X(int, ListPush, (RedisModuleKey * key, int where, RedisModuleString *ele))                                       \
  X(RedisModuleString *, ListPop, (RedisModuleKey * key, int where))                                                \
  X(RedisModuleString *, ListGet, (RedisModuleKey * key, long index))                                               \
  X(int, ZsetFirstInScoreRange, (RedisModuleKey * key, double min, double max, int minex, int maxex))               \
  X(RedisModuleString *, ZsetRangeCurrentElement, (RedisModuleKey * key, double *score))                            \
  X(int, ZsetRangeNext, (RedisModuleKey * key))                                                                     \
  X(int, ZsetRangeEndReached, (RedisModuleKey * key))                                                               \
  X(void, ZsetRangeStop, (RedisModuleKey * key))                                                                    \
  X(int, StreamAdd,                                                                                                 \
    (RedisModuleKey * key, int flags, RedisModuleStreamID *id, RedisModuleString **argv, long numfields))           \
  X(long long, StreamTrimByLength, (RedisModuleKey * key, int flags, long long length))                             \
  X(int, SignalModifiedKey, (RedisModuleCtx * ctx, RedisModuleString * keyname))                                    \
  X(int, NotifyKeyspaceEvent, (RedisModuleCtx * ctx, int type, const char *event, RedisModuleString *key))          \
  X(int, Replicate, (RedisModuleCtx * ctx, const char *cmdname, const char *fmt, ...))                              \
  X(mstime_t, Milliseconds, (void))                                                                                 \
  X(RedisModuleCallReply *, Call, (RedisModuleCtx * ctx, const char *cmdname, const char *fmt, ...))                \
  X(RedisModuleString *, GetCurrentUserName, (RedisModuleCtx * ctx))                                                \
  X(RedisModuleUser *, GetModuleUserFromUserName, (RedisModuleString * name))                                       \
  X(int, FreeModuleUser, (RedisModuleUser * user))                                                                  \
  X(int, ACLCheckKeyPermissions, (RedisModuleUser * user, RedisModuleString * key, int flags))                      \
  X(int, ACLAddLogEntry, (RedisModuleCtx * ctx, RedisModuleUser * user, RedisModuleString * object, int reason))

#define EMQ_API_DECLARE(ret, name, params) extern ret(*RedisModule_##name) params;
EMQ_API(EMQ_API_DECLARE)
#undef EMQ_API_DECLARE

/* Binds every function above from the load context; REDISMODULE_ERR when
 * the server lacks one (a server older than the module supports). */
int emq_bind_api(RedisModuleCtx *ctx);

#endif
