/* Numbers with the meaning the scripts give them: Lua 5.1's pattern and
 * tonumber for arguments and lanes, the server's integer rule for what
 * HINCRBY takes, and the counter rule both executors apply to a row. */
#ifndef EMQ_LUA_NUMBERS_H
#define EMQ_LUA_NUMBERS_H

#include <stddef.h>

int emq_matches_int(const char *s, size_t len, int allow_minus); /* '^-?%d+$' or '^%d+$' */
int emq_lua_tonumber(const char *s, size_t len, double *out);    /* tonumber(s) ~= nil */
int emq_strict_ll(const char *s, size_t len, long long *out);    /* what HINCRBY accepts */

/* A counter (attempts, lease_epoch, failures, a stats field) as the
 * scripts accept it: the server's integer form in 18 characters at most,
 * so that no increment of ours overflows it. */
int emq_is_counter(const char *s, size_t len, long long *out);

/* A lane: '^-?%d+$', then tonumber, within -1000..1000. */
int emq_is_lane(const char *s, size_t len, double *out);

#endif
