/* The field names and values the transitions read and write, and numbers
 * written as the server writes them. */
#ifndef EMQ_WORDS_H
#define EMQ_WORDS_H

#include <stddef.h>
#include <stdint.h>

#include "module_api.h"

/* Created once at load and shared by every call: HashGet and HashSet take
 * a field as a string without copying it first, HashSet copies a value,
 * Replicate and the reply take a reference, and nothing changes them. One
 * word serves as a field and a value where the spelling is the same
 * (completed, dead). */
typedef enum {
  EMQ_WORD_STATE,
  EMQ_WORD_ATTEMPTS,
  EMQ_WORD_LEASE_EPOCH,
  EMQ_WORD_PAYLOAD,
  EMQ_WORD_LANE,
  EMQ_WORD_FAILURES,
  EMQ_WORD_ERROR,
  EMQ_WORD_RESULT,
  EMQ_WORD_PAUSED,
  EMQ_WORD_CLAIMED,
  EMQ_WORD_RETRIED,
  EMQ_WORD_RELEASED,
  EMQ_WORD_PENDING,
  EMQ_WORD_ACTIVE,
  EMQ_WORD_DELAYED,
  EMQ_WORD_DEAD,
  EMQ_WORD_COMPLETED,
  EMQ_WORD_MAX_ACTIVE,
  EMQ_WORD_RATE_MAX,
  EMQ_WORD_RATE_WINDOW_MS,
  EMQ_WORD_RATE_CREDIT,
  EMQ_WORD_RATE_AT,
  EMQ_WORD_PARENT,
  EMQ_WORD_CHILDREN,
  EMQ_WORD_UNIQUE,
  EMQ_WORD_UNIQUE_MODE,
  EMQ_WORD_UNIQUE_FOR_MS,
  EMQ_WORD_TRACEPARENT,
  EMQ_WORD_TRACESTATE,
  EMQ_WORD_DUPLICATES,
  EMQ_WORD_REPLACED,
  EMQ_WORD_GONE,
  EMQ_WORD_GROUP,
  EMQ_WORD_IN,
  EMQ_WORD_DEFICIT,
  EMQ_WORD_ROT,
  EMQ_WORD_CAP,
  EMQ_WORD_RATE,
  EMQ_WORD_STAR, /* "*": the ungrouped jobs, and the default policy */
  EMQ_WORD_ZERO, /* "0" */
  EMQ_WORD_EMPTY,
  EMQ_WORD_EVENT, /* an events entry's fields: event, id, attempt */
  EMQ_WORD_ID,
  EMQ_WORD_ATTEMPT,
  EMQ_WORD_COUNT
} EmqWord;
int emq_create_words(void);
RedisModuleString *emq_word(EmqWord word);

int emq_bytes_equal(RedisModuleString *a, const char *b, size_t blen);
int emq_str_equal(RedisModuleString *a, RedisModuleString *b);

/* Numbers as the server writes them into a reply or a command: an integer
 * in decimal; a score as "%.17g" (integral scores, which times and lanes
 * are, without going through printf). Each returns the length written. */
size_t emq_format_ll(char buf[24], long long value);
size_t emq_format_score(char buf[40], double score);
/* A stream entry's id, "<ms>-<seq>", as XADD replies it. */
size_t emq_format_stream_id(char buf[48], uint64_t ms, uint64_t seq);

#endif
