/* Defines the API function pointers module_api.h declares and binds them
 * by name through the lookup the server hands every module at load. */
#include "module_api.h"

#define EMQ_API_DEFINE(ret, name, params) ret(*RedisModule_##name) params = NULL;
EMQ_API(EMQ_API_DEFINE)
#undef EMQ_API_DEFINE

typedef int (*GetApiFunc)(const char *name, void *out);

int emq_bind_api(RedisModuleCtx *ctx) {
  /* The load context's first word is the server's API lookup function. */
  GetApiFunc get_api = (GetApiFunc)(unsigned long)((void **)ctx)[0];
  int failed = 0;
#define EMQ_API_BIND(ret, name, params) \
  failed |= get_api("RedisModule_" #name, (void *)&RedisModule_##name) != REDISMODULE_OK;
  EMQ_API(EMQ_API_BIND)
#undef EMQ_API_BIND
  return failed ? REDISMODULE_ERR : REDISMODULE_OK;
}
