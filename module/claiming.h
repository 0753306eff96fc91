/* What EMQ.CLAIM's two halves share: the call's sets and clock, the jobs
 * leased so far, and leasing from one set (claim.c); claim.c serves the
 * rotation's members through rotation.c, which leases through it. */
#ifndef EMQ_CLAIMING_H
#define EMQ_CLAIMING_H

#include "groups.h"
#include "writes.h"

typedef struct {
  RedisModuleString *id;
  RedisModuleString *payload;
  long long attempts;
  long long epoch;
  RedisModuleString *attempts_text; /* as written, for its entry */
  RedisModuleString *unique, *unique_mode;
} Claimed;

/* One call's claiming: the zsets it moves ids between (dead is the one
 * beside the row root), its clock, the jobs leased so far (grown as they
 * come), and the group block when given (groups.gq_root NULL when not). */
typedef struct {
  const EmqCall *call;
  RedisModuleKey *pending, *active, *delayed, *dead;
  RedisModuleString *dead_name;
  mstime_t now;
  double deadline;
  EmqGroups groups;
  RedisModuleString *uniq_root; /* given: a job claimed in started mode frees its key */
  Claimed *jobs;
  size_t claimed, jobs_cap;
  long long want;
  EmqZaddBatch leases;
  /* Rows are checked against the caller's ACL before every pop (with the
   * block), or before every pop but the first (without it: the first
   * round's rows were checked before anything was written). */
  int check_first_round;
  int refused; /* the caller's ACL refused a row: replied */
} Claiming;

/* The caller's ACL refused a row or a group's key (groups.refused): the
 * refusal is replied, and the call writes nothing more. */
static inline int emq_claim_refused(const Claiming *c) { return c->refused || c->groups.refused; }

/* Pops set in rounds until k jobs are leased or it is empty, as the
 * script's lease_from: each job leased (row, active, its group's count,
 * its entry). Returns the jobs leased; *popped counts the ids popped
 * (gone and malformed rows too). Stops with c->refused set when the
 * caller's ACL refuses a row (replied). */
long long emq_lease_from(Claiming *c, RedisModuleKey *set, RedisModuleString *set_name, long long k, long long *popped);

/* The rotation's turns while fewer than want are leased and it is not
 * empty (docs/protocol.md, "Groups", claim step 5). default_policy is the
 * queue's * policy. */
void emq_serve_rotation(Claiming *c, const EmqPolicy *default_policy);

#endif
