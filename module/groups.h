/* Groups (docs/protocol.md, "Groups"): the steps every EMQ.* command given
 * the group block shares with its script, in the script's order of
 * commands: to group, out of group, wake, tidy, checking a count, and a
 * group's policy. The block is seven KEYS (gq root, grp root, gact root,
 * gidx, rot, groups, gwait); a group's own keys are a root plus its name.
 * A command's steps on one group go through one set of handles (the held
 * group, below): opened once, so a visit costs three lookups, and no two
 * handles on one key are ever open together. */
#ifndef EMQ_GROUPS_H
#define EMQ_GROUPS_H

#include "call.h"
#include "module_api.h"

/* A group's policy: name=value fields separated by single spaces. */
typedef struct {
  long long weight; /* 1 when not given */
  long long max_active;
  long long rate_max; /* 0: no rate */
  long long rate_window_ms;
  int paused;
} EmqPolicy;

/* 1 and *p when text is a policy; else 0 and problem holds the script's
 * words ("weight must be an integer in 1..1000"). */
int emq_parse_policy(const char *text, size_t len, EmqPolicy *p, char problem[128]);

/* A group name: 1-128 bytes of [0-9A-Za-z_.:-]. */
int emq_is_group(const char *g, size_t len);

/* A group the command's steps are on: its three keys opened for writing.
 * Taking another group closes them (AutoMemory closes the last at the
 * command's end). */
typedef struct {
  RedisModuleString *name; /* NULL: none held */
  RedisModuleString *gq_name, *grp_name, *gact_name;
  RedisModuleKey *gq, *grp, *gact;
  int checked; /* group_of found the caller may touch them and their types right */
} EmqGroupKeys;

/* While a claim walks the rotation, the replication of its writes to rot
 * and gidx waits for the walk's end: the keys change at once, and at
 * emq_groups_flush the replica gets the pops and pushes as one RPUSH and
 * one LPOP, and gidx's changes as the scores they left, in order, one
 * ZADD for each run of them (a ZREM for each run of removals). A walk of
 * n visits would replicate some 4n commands one by one, each a command
 * lookup and an argv built: a quarter of a grouped claim's instructions.
 * The replica ends with what the primary holds either way. */
typedef struct {
  int on;
  long long rot_pops;
  long long star_popped; /* gidx's * goes down by it once, at the flush */
  RedisModuleString **rot_pushed;
  /* Pairs: the score a member was left at (NULL: removed), the member. */
  RedisModuleString **idx_log;
  size_t n_pushed, cap_pushed, n_logged, cap_logged;
} EmqJournal;

typedef struct {
  RedisModuleCtx *ctx;
  RedisModuleString *gq_root, *grp_root, *gact_root, *idx_name, *rot_name, *groups_name, *wait_name;
  RedisModuleString *prefix; /* emq:{q}: */
  RedisModuleKey *idx, *rot, *groups, *wait;
  /* The active set, for checking a count: the command's own handle when
   * it holds one, else opened when a check needs it. */
  RedisModuleKey *active;
  RedisModuleString *active_name;
  mstime_t now;
  int have_now;
  /* The command's name, for the ACL's refusal (as for rows). */
  const char *command;
  /* The caller's ACL refused a group's key: replied, and every later
   * group_of answers NULL without a second reply. */
  int refused;
  /* The group the steps are on. While a claim's turn works on it through
   * its handles (pinned), a step on another group (a row whose group field
   * names another than the zset it was in) takes the spare slot. */
  EmqGroupKeys held, spare;
  int pinned;
  EmqJournal journal;
} EmqGroups;

/* The block of a call (KEYS in the roles EMQ_KEY_GQ_ROOT..EMQ_KEY_GWAIT),
 * or 0 when it was not given. Then rot must be a list, gidx and gwait
 * zsets, groups a hash (or absent), else WRONGTYPE is replied and -1
 * returned. active (may be NULL) is the command's handle on the active
 * set, which the steps then read through. */
int emq_groups_begin(RedisModuleCtx *ctx, const EmqCall *call, const EmqTransition *t, EmqGroups *g,
                     RedisModuleKey *active);

/* The server's time for the call, read once (the scripts' now_ms). */
mstime_t emq_groups_now(EmqGroups *g);
void emq_groups_set_now(EmqGroups *g, mstime_t now);

/* A group's own key: root + name. */
RedisModuleString *emq_group_key(EmqGroups *g, RedisModuleString *root, RedisModuleString *name);

/* name's keys: the ones already open when name is held. Every step on a
 * group's keys takes them here. */
EmqGroupKeys *emq_group_keys(EmqGroups *g, RedisModuleString *name);
/* While pinned, the held group's handles stay open whatever other group a
 * step takes (claim's turn, which holds them across the leases). */
void emq_group_pin(EmqGroups *g);
void emq_group_unpin(EmqGroups *g);

/* The row's group when the block is given, it is well formed and its
 * keys have their types; NULL otherwise (keys of another type are named
 * in the log). Its keys (gq, grp, gact: built from the roots, so the
 * server never checks them) are checked against the caller's ACL first,
 * as rows are: refused, the script path's error is replied, g->refused
 * set, and NULL returned; the caller stops as the script would. */
RedisModuleString *emq_group_of(EmqGroups *g, RedisModuleString *group);

/* The caller's ACL on keys of the groups built from a root (grp:* of the
 * ungrouped jobs): 1 when it may write every one; else as emq_group_of's
 * refusal (replied, g->refused set) and 0. */
int emq_group_may_touch(EmqGroups *g, RedisModuleString **keys, size_t n);

/* name's policy (its own, else the default, else all defaults); 0 when
 * it is broken. */
int emq_policy_of(EmqGroups *g, RedisModuleString *name, EmqPolicy *p);

void emq_group_check_count(EmqGroups *g, RedisModuleString *name);
int emq_group_wake(EmqGroups *g, RedisModuleString *name, int after_end);
void emq_group_tidy(EmqGroups *g, RedisModuleString *name);
/* A job of name becomes pending, at lane. */
void emq_group_to(EmqGroups *g, RedisModuleString *name, RedisModuleString *id, double lane);
/* A counted job of name stops holding its lease and is not pending. */
void emq_group_out(EmqGroups *g, RedisModuleString *name, RedisModuleString *id);
/* n of name's pending ids left its zset: gidx goes down by n, and * too. */
void emq_group_uncount(EmqGroups *g, RedisModuleString *name, long long n);

/* The writes to rot and gidx, journalled while the journal is on. */
void emq_rot_pop(EmqGroups *g);
void emq_rot_push(EmqGroups *g, RedisModuleString *name);
void emq_groups_journal(EmqGroups *g);
/* Replicates what the journal holds, and turns it off. */
void emq_groups_flush(EmqGroups *g);

#endif
