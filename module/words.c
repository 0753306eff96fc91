/* Field names, values and numbers as the server writes them: see words.h. */
#include "words.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static RedisModuleString *words[EMQ_WORD_COUNT];

int emq_create_words(void) {
  static const char *const text[EMQ_WORD_COUNT] = {"state",
                                                   "attempts",
                                                   "lease_epoch",
                                                   "payload",
                                                   "lane",
                                                   "failures",
                                                   "error",
                                                   "result",
                                                   "paused",
                                                   "claimed",
                                                   "retried",
                                                   "released",
                                                   "pending",
                                                   "active",
                                                   "delayed",
                                                   "dead",
                                                   "completed",
                                                   "max_active",
                                                   "rate_max",
                                                   "rate_window_ms",
                                                   "rate_credit",
                                                   "rate_at",
                                                   "parent",
                                                   "children",
                                                   "unique",
                                                   "unique_mode",
                                                   "unique_for_ms",
                                                   "traceparent",
                                                   "tracestate",
                                                   "duplicates",
                                                   "replaced",
                                                   "gone",
                                                   "group",
                                                   "in",
                                                   "deficit",
                                                   "rot",
                                                   "cap",
                                                   "rate",
                                                   "*",
                                                   "0",
                                                   "",
                                                   "event",
                                                   "id",
                                                   "attempt"};
  for (int i = 0; i < EMQ_WORD_COUNT; ++i) {
    /* No context: the strings outlive every call, as long as the module. */
    if (words[i] == NULL) words[i] = RedisModule_CreateString(NULL, text[i], strlen(text[i]));
    if (words[i] == NULL) return REDISMODULE_ERR;
  }
  return REDISMODULE_OK;
}

RedisModuleString *emq_word(EmqWord word) { return words[word]; }

/* v's decimal digits at buf, without a terminator; their count. */
static size_t format_unsigned(char *buf, unsigned long long v) {
  char digits[24];
  size_t n = 0;
  do {
    digits[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  size_t len = 0;
  while (n > 0) buf[len++] = digits[--n];
  return len;
}

size_t emq_format_ll(char buf[24], long long value) {
  size_t len = 0;
  if (value < 0) buf[len++] = '-';
  /* In unsigned arithmetic, so that LLONG_MIN has a magnitude. */
  len += format_unsigned(buf + len, value < 0 ? 0ULL - (unsigned long long)value : (unsigned long long)value);
  buf[len] = '\0';
  return len;
}

size_t emq_format_stream_id(char buf[48], uint64_t ms, uint64_t seq) {
  size_t len = format_unsigned(buf, ms);
  buf[len++] = '-';
  len += format_unsigned(buf + len, seq);
  buf[len] = '\0';
  return len;
}

size_t emq_format_score(char buf[40], double score) {
  /* Below 1e17 an integral value has at most 17 digits, which "%.17g"
   * writes as a plain integer; -0 keeps its sign through printf. */
  if (score > -1e17 && score < 1e17 && score == (double)(long long)score && !(score == 0 && signbit(score))) {
    return emq_format_ll(buf, (long long)score);
  }
  return (size_t)snprintf(buf, 40, "%.17g", score);
}

int emq_bytes_equal(RedisModuleString *a, const char *b, size_t blen) {
  if (a == NULL || b == NULL) return 0;
  size_t alen;
  const char *ap = RedisModule_StringPtrLen(a, &alen);
  return alen == blen && memcmp(ap, b, blen) == 0;
}

int emq_str_equal(RedisModuleString *a, RedisModuleString *b) {
  if (b == NULL) return 0;
  size_t blen;
  const char *bp = RedisModule_StringPtrLen(b, &blen);
  return emq_bytes_equal(a, bp, blen);
}
