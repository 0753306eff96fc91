/* Numbers with the scripts' meaning: see lua_numbers.h. */
#include "lua_numbers.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "module_api.h"

int emq_matches_int(const char *s, size_t len, int allow_minus) {
  if (s == NULL) return 0;
  size_t i = 0;
  if (allow_minus && len > 0 && s[0] == '-') i = 1;
  if (i == len) return 0;
  for (; i < len; ++i) {
    if (s[i] < '0' || s[i] > '9') return 0;
  }
  return 1;
}

/* Lua 5.1's tonumber on a string: C's strtod on the bytes up to the first
 * NUL, a hexadecimal integer when strtod stops at an x, then nothing but
 * white space. */
int emq_lua_tonumber(const char *s, size_t len, double *out) {
  if (s == NULL) return 0;
  char buf[128];
  const char *nul = memchr(s, '\0', len);
  size_t n = nul ? (size_t)(nul - s) : len;
  /* The server's allocator, as for every value it holds: it never returns
   * NULL (the server stops on out of memory). */
  char *copy = n < sizeof buf ? buf : RedisModule_Alloc(n + 1);
  memcpy(copy, s, n);
  copy[n] = '\0';
  char *end;
  double d = strtod(copy, &end);
  int ok = end != copy;
  if (ok && (*end == 'x' || *end == 'X')) d = (double)strtoul(copy, &end, 16);
  while (ok && (*end == ' ' || (*end >= '\t' && *end <= '\r'))) ++end;
  ok = ok && *end == '\0';
  if (copy != buf) RedisModule_Free(copy);
  if (ok) *out = d;
  return ok;
}

/* The server's string-to-integer rule: no sign but a leading minus, no
 * leading zero, no white space, within a long long. */
int emq_strict_ll(const char *s, size_t len, long long *out) {
  if (s == NULL || len == 0 || len > 20) return 0;
  if (len == 1 && s[0] == '0') {
    *out = 0;
    return 1;
  }
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == len || s[i] < '1' || s[i] > '9') return 0;
  unsigned long long v = 0;
  for (; i < len; ++i) {
    if (s[i] < '0' || s[i] > '9') return 0;
    unsigned d = (unsigned)(s[i] - '0');
    if (v > (ULLONG_MAX - d) / 10) return 0;
    v = v * 10 + d;
  }
  if (s[0] == '-') {
    if (v > (unsigned long long)LLONG_MAX + 1) return 0;
    *out = v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)v;
  } else {
    if (v > (unsigned long long)LLONG_MAX) return 0;
    *out = (long long)v;
  }
  return 1;
}

int emq_is_counter(const char *s, size_t len, long long *out) {
  /* The scripts' is_counter: '0' or '^-?[1-9]%d*$' in 18 characters, which
   * is the server's integer rule cut to a length no count overflows. */
  return len <= 18 && emq_matches_int(s, len, 1) && emq_strict_ll(s, len, out);
}

int emq_is_lane(const char *s, size_t len, double *out) {
  return emq_matches_int(s, len, 1) && emq_lua_tonumber(s, len, out) && *out >= -1000 && *out <= 1000;
}
