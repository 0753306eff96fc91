--[[ claim: promote due delayed jobs, then lease up to max_count pending jobs.
  Claim order is the pending set's order: lowest lane first, then byte order
  of id. Each claimed job gets attempts+1, lease_epoch+1 (the fencing token
  of this lease), state active, and an active score of now+lease_ms.
  A paused queue (meta paused = 1) claims nothing and changes nothing,
  until its paused_until (server ms), if it has one: once that is now or
  past, claim deletes paused, paused_by, paused_reason and paused_until
  and claims as usual (PROTOCOL.md, "Pause"). A paused_until that is not
  an integer in 0..10^15 is EMQARG naming it, before any write: a broken
  end must not lift the pause.
  An id whose row is gone is dropped from the set and skipped; so is one
  whose row is not a hash, which is also named in the server's log (the
  key stays for an operator to look at). A row that is a hash whose
  attempts or lease_epoch is not an integer is not claimed: it goes to
  dead (score now, state dead, error "row field <field> is not an
  integer", nothing else written), so that no job is ever in no set. The
  dead set is the one beside the row root (KEYS[6] with dead for job:). A
  due delayed job whose lane is not an integer in -1000..1000 is not
  promoted: it stays in delayed, named in the server's log, for an
  operator. The stats counter claimed counts the jobs
  claimed; when it is not an integer (or stats is not a hash), broken by
  some other writer, it is left as it is and named in the server's log,
  and the claim goes on: checked before any pop, so nothing is stranded.

  KEYS[1]  emq:{q}:pending    zset  member id, score lane
  KEYS[2]  emq:{q}:active     zset  member id, score lease deadline (ms)
  KEYS[3]  emq:{q}:delayed    zset  member id, score due time (ms)
  KEYS[4]  emq:{q}:meta       hash  paused = 1 while paused (paused_until:
                                    when it ends); the limits and the rate's
                                    bucket (below)
  KEYS[5]  emq:{q}:stats      hash  counter claimed
  KEYS[6]  emq:{q}:job:       the row root; a row is KEYS[6] .. id
  KEYS[7]  emq:{q}:gq:        optional, the group block (docs/protocol.md,
                                    "Groups"), seven KEYS known by the
                                    first, the group root (a group's
                                    pending ids: KEYS[7] .. group):
                                    jobs are claimed by group (below)
  KEYS[8]  emq:{q}:grp:       optional, the block: a group's state root
  KEYS[9]  emq:{q}:gact:      optional, the block: a group's count root
  KEYS[10] emq:{q}:gidx       optional, the block: the pending counts
  KEYS[11] emq:{q}:rot        optional, the block: the rotation
  KEYS[12] emq:{q}:groups     optional, the block: the policies
  KEYS[13] emq:{q}:gwait      optional, the block: groups due back
  KEYS[14] emq:{q}:uniq:       optional, the uniq root: given, a job
                                    claimed in unique_mode started frees its
                                    key (the lock root .. its unique), only
                                    while the lock holds its id
  KEYS[15] emq:{q}:events     stream optional (each of the block and the
                                    root may be absent, the numbers then
                                    shift): given, the entries pending
                                    (each job promoted) and active (each
                                    job claimed), in that order
  ARGV[1]  lease_ms           integer 1..1000000000000
  ARGV[2]  max_count          integer 1..1000000, jobs to claim at most
  ARGV[3]  promote_limit      integer 0..1000000, due delayed jobs to move first
  ARGV[4]  events             with the stream: its length, 1..10000000

  Reply:   flat job list [id, payload, attempts, lease_epoch, id, ...];
           empty when paused or nothing is due. attempts and lease_epoch
           are integers.
  Errors:  EMQARG when an argument is not an integer in range, or KEYS[6]
                  is not a row root emq:{q}:job:
           EMQARG <meta> <field> ... when a limit field is broken (below)
           EMQARG <meta> paused_until ... when a pause's end is broken
           WRONGTYPE when pending, active, delayed or dead is not a zset
           EMQARG  when events is not an integer in 1..10000000
           WRONGTYPE when the stream is not a stream

  Limits (PROTOCOL.md, "Limits"), from meta; a field absent is no limit:
    max_active      1..1000000: the active set holds at most this many
    rate_max        1..1000000 claims per rate_window_ms (1..86400000), as
    rate_window_ms  a bucket of at most rate_max tokens; both or neither
    rate_credit     0..86400000000000: tokens x rate_window_ms, and the
    rate_at         0..10^15: server time it was brought up to date; either
                    absent is a full bucket. Written by claim alone, by
                    every claim that is not paused, when a rate is set.
  Jobs claimed: the least of max_count, max_active less the active set's
  size, and the whole tokens in the bucket once refilled (rate_max per ms
  since rate_at, at most one window's worth; none when the clock stepped
  back). A limit field present and not the server's integer form within
  its range, or half a rate, is EMQARG naming it, before any write: a
  broken limit stops the queue rather than lift the limit.

  Groups (docs/protocol.md, "Groups"): given the block, due delayed jobs
  and due groups of gwait are promoted into their groups, the ungrouped
  jobs join the rotation as * when it is not empty, and the jobs to claim
  are taken by weighted deficit round robin from the rotation's head: a
  group's turn is its weight in claims; a group paused, at its max_active
  (once its count is checked) or out of its rate's tokens leaves the
  rotation (for gwait, the last two); a group run dry leaves it too. A
  leased job whose row has a group is counted in it (gact). With the
  rotation empty, claim pops pending as it does without the block.
  Errors, in addition: EMQARG KEYS[n] must be <name> for a block out of
  order; WRONGTYPE for rot, gidx, gwait or groups; EMQARG <groups> *
  <problem> for a broken default policy. A group whose policy, bucket or
  keys are broken is taken out of the rotation and named in the log.
]]
-- Events (PROTOCOL.md, "Events"): given the queue's stream as the last KEY,
-- the last ARGV is its length, and each state this call writes is appended.
local WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value'
local stream = string.match(KEYS[#KEYS], '^emq:{[^}]*}:events$') and KEYS[#KEYS]
local stream_len = stream and string.match(ARGV[#ARGV] or '', '^%d+$') and tonumber(ARGV[#ARGV])
if stream and not (stream_len and stream_len >= 1 and stream_len <= 10000000) then
  return redis.error_reply('EMQARG events must be an integer in 1..10000000')
end
-- Compared as text: a table of the two types would be built on every call.
local stream_type = stream and redis.call('TYPE', stream).ok
if stream_type and stream_type ~= 'stream' and stream_type ~= 'none' then
  return redis.error_reply(WRONGTYPE)
end
local function emit(event, id, attempt, ...)
  if stream then
    redis.call('XADD', stream, 'MAXLEN', '~', stream_len, '*', 'event', event, 'id', id, 'attempt', attempt, ...)
  end
end

-- [shared unique_root: every copy the same, tests/lua/script_copies_test.cpp]
-- Unique jobs (docs/protocol.md, "Release"): the uniq root is the KEY
-- before the stream (the last without one) when it is emq:{q}:uniq:.
-- Given it, a job leaving its key's cover frees the key, only while the
-- lock still holds its id; a window is left to expire.
local uniq_at = #KEYS - (stream and 1 or 0)
local uniq_root = string.match(KEYS[uniq_at] or '', '^emq:{[^}]*}:uniq:$') and KEYS[uniq_at]

-- The lock of a row's unique key that this call may free or take: none
-- without the root, for a key that is not well formed, or for a window.
local function lock_of(key, mode)
  if uniq_root and key and mode ~= 'window' and #key <= 128 and string.match(key, '^[0-9A-Za-z_.:%-]+$') then
    return uniq_root .. key
  end
  return nil
end
-- [end shared unique_root]

-- [shared unique_release: every copy the same, tests/lua/script_copies_test.cpp]
local function release_key(id, key, mode)
  local lock = lock_of(key, mode)
  if lock and redis.pcall('GET', lock) == id then
    redis.call('DEL', lock)
  end
end
-- [end shared unique_release]
-- [shared group_block: every copy the same, tests/lua/script_copies_test.cpp]
-- The length read len of key: its integer (0 when there is no key), or
-- false when the key is of another type; any other refusal (the ACL's) is
-- raised as it came. A type check at less cost than TYPE, whose status
-- reply becomes a table (0 is true in Lua: only false fails a check).
local function length_of(len, key)
  local r = redis.pcall(len, key)
  if type(r) ~= 'table' then
    return r
  elseif string.sub(r.err, 1, 10) == 'WRONGTYPE ' then
    return false
  end
  error(r, 0)
end

-- Groups (docs/protocol.md, "Groups"): given the group block, seven KEYS
-- before the uniq root and the stream whose first is emq:{q}:gq:, a
-- grouped job moves through its group (its zset, its count, the
-- rotation). Without it, a grouped job moves as any other.
local G
local own_keys = #KEYS - (stream and 1 or 0)
if string.match(KEYS[own_keys] or '', '^emq:{[^}]*}:uniq:$') then
  own_keys = own_keys - 1
end
if own_keys > 7 and string.match(KEYS[own_keys - 6], '^emq:{[^}]*}:gq:$') then
  local q = string.match(KEYS[1], '^emq:{[^}]*}:') or ''
  for i, name in ipairs({'gq:', 'grp:', 'gact:', 'gidx', 'rot', 'groups', 'gwait'}) do
    if KEYS[own_keys - 7 + i] ~= q .. name then
      return redis.error_reply('EMQARG KEYS[' .. (own_keys - 7 + i) .. '] must be ' .. q .. name)
    end
  end
  own_keys = own_keys - 7
  G = {q = q, gq = q .. 'gq:', grp = q .. 'grp:', gact = q .. 'gact:', idx = q .. 'gidx', rot = q .. 'rot',
    groups = q .. 'groups', wait = q .. 'gwait'}
  if not (length_of('LLEN', G.rot) and length_of('ZCARD', G.idx) and length_of('ZCARD', G.wait) and
      length_of('HLEN', G.groups)) then
    return redis.error_reply(WRONGTYPE)
  end
end

local group_now_cache
local function group_now()
  if not group_now_cache then
    local t = redis.call('TIME')
    group_now_cache = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return group_now_cache
end
-- [end shared group_block]

-- [shared group_policy: every copy the same, tests/lua/script_copies_test.cpp]
-- A group's policy: name=value fields separated by single spaces; nil and
-- what is wrong when it is not one.
local POLICY_RANGES = {weight = {1, 1000, '1..1000'}, max_active = {1, 1000000, '1..1000000'},
  rate_max = {1, 1000000, '1..1000000'}, rate_window_ms = {1, 86400000, '1..86400000'}}
local function parse_policy(text)
  local p = {}
  for field in string.gmatch(text == '' and '' or text .. ' ', '(.-) ') do
    local name, value = string.match(field, '^([^=]+)=(.*)$')
    if not name then
      return nil, 'policy must be name=value fields separated by spaces'
    end
    local range = POLICY_RANGES[name]
    if name ~= 'paused' and not range then
      return nil, 'unknown policy field ' .. string.sub(name, 1, 64)
    elseif p[name] ~= nil then
      return nil, 'policy field ' .. name .. ' is given twice'
    elseif name == 'paused' then
      if value ~= '1' then
        return nil, 'paused must be 1'
      end
      p.paused = true
    else
      local n = #value <= 18 and (value == '0' or string.match(value, '^-?[1-9]%d*$')) and tonumber(value)
      if not n or n < range[1] or n > range[2] then
        return nil, name .. ' must be an integer in ' .. range[3]
      end
      p[name] = n
    end
  end
  if p.rate_max and not p.rate_window_ms then
    return nil, 'rate_max must be set with rate_window_ms'
  elseif p.rate_window_ms and not p.rate_max then
    return nil, 'rate_window_ms must be set with rate_max'
  end
  p.weight = p.weight or 1
  return p
end

-- g's policy (its own, else the default, else all defaults); nil when broken.
local function policy_of(g)
  local t = redis.call('HMGET', G.groups, g, '*')
  return (parse_policy(t[1] or t[2] or ''))
end
-- [end shared group_policy]

-- [shared group_steps: every copy the same, tests/lua/script_copies_test.cpp]
local function is_group(g)
  return type(g) == 'string' and #g <= 128 and string.match(g, '^[0-9A-Za-z_.:%-]+$') ~= nil
end

-- The row's group when the block is given, it is well formed and its keys
-- have their types; nil otherwise (a group whose keys do not is named in
-- the log, and its job moves as an ungrouped one).
local function group_of(g)
  if not G or not is_group(g) then
    return nil
  end
  local a, b, c = length_of('ZCARD', G.gq .. g), length_of('HLEN', G.grp .. g), length_of('ZCARD', G.gact .. g)
  if a and b and c then
    return g
  end
  redis.log(redis.LOG_WARNING, 'emq: group ' .. g .. ' of ' .. G.q .. ' has a key of another type; ' ..
    'its job moved as an ungrouped one, the keys left for an operator')
  return nil
end

-- Up to 10 counted ids whose recorded deadline has passed, against their
-- rows: one still running in g keeps its count at its deadline in active,
-- any other leaves it (a count an emq/1 peer left too high heals here).
local function check_count(g)
  local gact = G.gact .. g
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', gact, '-inf', group_now(), 'LIMIT', 0, 10)) do
    local row = G.q .. 'job:' .. id
    local f = redis.call('TYPE', row).ok == 'hash' and redis.call('HMGET', row, 'state', 'group')
    local score = f and f[1] == 'active' and f[2] == g and redis.pcall('ZSCORE', G.q .. 'active', id)
    if type(score) == 'string' then
      redis.call('ZADD', gact, score, id)
    else
      redis.call('ZREM', gact, id)
    end
  end
end

-- g back at the rotation's tail when it may run: something pending, not
-- paused, its policy well formed, and not there or waiting for tokens
-- already (nor for its cap, unless a job of it just stopped counting).
-- Not woken, also where it is (its in field, false when absent): tidy
-- needs it next, and nothing wrote it since.
local function wake(g, after_end)
  local grp = G.grp .. g
  local where = redis.call('HGET', grp, 'in')
  if where == 'rot' or where == 'rate' or (where == 'cap' and not after_end) then
    return false, where
  end
  if redis.call('ZCARD', G.gq .. g) == 0 then
    return false, where
  end
  local p = policy_of(g)
  if not p or p.paused then
    return false, where
  end
  if where == 'cap' then
    redis.call('ZREM', G.wait, g)
  end
  redis.call('RPUSH', G.rot, g)
  redis.call('HSET', grp, 'in', 'rot')
  redis.call('PERSIST', grp)
  return true
end

-- An idle group's keys go: nothing pending, nothing counted (once the
-- count is checked), not in the rotation. A rated group's bucket stays
-- one window, after which it would be full anyway. where: g's in field
-- when the caller has just read it (false: absent); nil, it is read.
local function tidy(g, where)
  local grp = G.grp .. g
  if where == nil then
    where = redis.call('HGET', grp, 'in')
  end
  if where == 'rot' or redis.call('EXISTS', G.gq .. g) == 1 then
    return
  end
  if redis.call('EXISTS', G.gact .. g) == 1 then
    check_count(g)
    if redis.call('EXISTS', G.gact .. g) == 1 then
      return
    end
  end
  if where == 'cap' or where == 'rate' then
    redis.call('ZREM', G.wait, g)
  end
  redis.call('ZREM', G.idx, g)
  local p = policy_of(g)
  if p and p.rate_max and redis.call('HEXISTS', grp, 'rate_at') == 1 then
    redis.call('HDEL', grp, 'in', 'deficit')
    redis.call('PEXPIRE', grp, p.rate_window_ms)
  else
    redis.call('DEL', grp)
  end
end

-- A job of g becomes pending: into g's zset, out of its count.
local function to_group(g, id, lane)
  local added = redis.call('ZADD', G.gq .. g, lane, id)
  local left = redis.call('ZREM', G.gact .. g, id)
  if added == 1 then
    redis.call('ZINCRBY', G.idx, 1, g)
    redis.call('ZINCRBY', G.idx, 1, '*')
  end
  wake(g, left == 1)
end

-- A counted job of g stops holding its lease and is not pending.
local function out_of_group(g, id)
  local where
  if redis.call('ZREM', G.gact .. g, id) == 1 then
    local woke
    woke, where = wake(g, true)
    if woke then
      return  -- in the rotation: tidy would leave it
    end
  end
  tidy(g, where)
end

-- n of g's pending ids left its zset: its count and the sum go down.
local function uncount_pending(g, n)
  redis.call('ZINCRBY', G.idx, -n, g)
  if tonumber(redis.call('ZINCRBY', G.idx, -n, '*')) <= 0 then
    redis.call('ZREM', G.idx, '*')
  end
end
-- [end shared group_steps]

local pending, active, delayed, meta, stats, row_root =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]

-- A counter as HINCRBY takes it (the server's integer form), in 18 digits
-- so that no count of ours can overflow it.
local function is_counter(v)
  return #v <= 18 and (v == '0' or string.match(v, '^-?[1-9]%d*$') ~= nil)
end

-- Scripts are not rolled back: an error half-way (HINCRBY on a row some
-- other writer broke) would leave every id popped with it in no set at
-- all. So a row is checked before anything is written for it, from its
-- TYPE and (a hash) its fields as lease_from reads them: nil for a hash
-- whose counters are integers, else 'type' (not a hash) or the name of the
-- first counter that is not.
local function row_fault(kind, f)
  if kind ~= 'hash' then
    return 'type'
  end
  if f[1] and not is_counter(f[1]) then
    return 'attempts'
  elseif f[2] and not is_counter(f[2]) then
    return 'lease_epoch'
  end
end

-- v + 1 in the server's integer form, as HINCRBY adds, for a counter
-- (is_counter) or nil (absent: 0). A double holds 15 digits exactly; a
-- longer counter is added to in two parts, its last nine digits apart.
local function plus_one(v)
  if not v then
    return '1'
  elseif #v <= 15 then
    return string.format('%d', tonumber(v) + 1)
  end
  local high, low = tonumber(string.sub(v, 1, -10)), tonumber(string.sub(v, -9))
  if high > 0 then
    low = low + 1
    if low == 1000000000 then
      high, low = high + 1, 0
    end
  elseif low > 0 then
    low = low - 1  -- -(|high| x 10^9 + low) + 1
  else
    high, low = high + 1, 999999999
  end
  return string.format('%d%09d', high, low)
end

local function skip_malformed(row, set)
  redis.log(redis.LOG_WARNING, 'emq claim: ' .. row .. ' is not a hash, so not an emq/1 row; dropped from ' .. set ..
    ', left in place for an operator')
end

-- The row's lane: absent is 0; nil when it is not an integer in -1000..1000.
local function lane_of(v)
  local n = not v and 0 or (string.match(v, '^-?%d+$') and tonumber(v))
  return n and n >= -1000 and n <= 1000 and n or nil
end

-- The same check for the counter claim increments: HINCRBY on a value that
-- is not an integer fails, and failing after the pops would strand them.
local function is_counter_of(hash, field)
  local kind = redis.call('TYPE', hash).ok
  if kind == 'none' then
    return true
  end
  if kind ~= 'hash' then
    return false
  end
  local v = redis.call('HGET', hash, field)
  return not v or is_counter(v)
end

-- A limit field: the server's integer form, within lo..hi; nil otherwise.
local function limit_of(v, lo, hi)
  local n = is_counter(v) and tonumber(v)
  return n and n >= lo and n <= hi and n or nil
end

local MAX_CREDIT = 86400000000000  -- rate_max x rate_window_ms at their largest
local MAX_AT = 1000000000000000

-- The limits in meta's fields f (max_active, rate_max, rate_window_ms,
-- rate_credit, rate_at); nil and what is wrong when a field is broken. The
-- bucket's fields are read only when a rate is set.
local function limits_of(f)
  local l = {}
  local function check(i, name, lo, hi, hint)
    if f[i] then
      l[name] = limit_of(f[i], lo, hi)
      if not l[name] then
        return string.format('%s must be an integer in %d..%d%s', name, lo, hi, hint or '')
      end
    end
  end
  local broken = check(1, 'max_active', 1, 1000000) or check(2, 'rate_max', 1, 1000000) or
    check(3, 'rate_window_ms', 1, 86400000)
  if broken then
    return nil, broken
  elseif l.rate_max and not l.rate_window_ms then
    return nil, 'rate_window_ms must be set with rate_max'
  elseif l.rate_window_ms and not l.rate_max then
    return nil, 'rate_max must be set with rate_window_ms'
  end
  if l.rate_max then
    broken = check(4, 'rate_credit', 0, MAX_CREDIT, ' (delete it for a full bucket)') or
      check(5, 'rate_at', 0, MAX_AT, ' (delete it for a full bucket)')
    if broken then
      return nil, broken
    end
  end
  return l
end

-- The bucket brought up to now: credit in tokens x rate_window_ms.
local function credit_of(l, now)
  local cap = l.rate_max * l.rate_window_ms
  if not l.rate_credit or not l.rate_at then
    return cap
  end
  return math.min(cap, l.rate_credit + math.min(math.max(now - l.rate_at, 0), l.rate_window_ms) * l.rate_max)
end

local function int_arg(s)
  return string.match(s or '', '^-?%d+$') and tonumber(s)
end
local lease_ms, max_count, promote_limit = int_arg(ARGV[1]), int_arg(ARGV[2]), int_arg(ARGV[3])
if not lease_ms or lease_ms < 1 or lease_ms > 1000000000000 then
  return redis.error_reply('EMQARG lease_ms must be an integer in 1..1000000000000')
end
if not max_count or max_count < 1 or max_count > 1000000 then
  return redis.error_reply('EMQARG max_count must be an integer in 1..1000000')
end
if not promote_limit or promote_limit < 0 or promote_limit > 1000000 then
  return redis.error_reply('EMQARG promote_limit must be an integer in 0..1000000')
end

-- The dead set beside the rows: where a row with a broken counter goes.
local dead = string.match(row_root, '^(emq:{[^}]*}:)job:$')
if not dead then
  return redis.error_reply('EMQARG KEYS[6] must be a row root emq:{q}:job:')
end
dead = dead .. 'dead'

local m = redis.call('HMGET', meta, 'paused', 'max_active', 'rate_max', 'rate_window_ms', 'rate_credit', 'rate_at',
  'paused_until')
local now = group_now()
-- A pause holds while it has no end or its end is later than now; one
-- whose end has come is lifted below, once nothing can refuse the claim.
local lift_pause = false
if m[1] == '1' then
  if not m[7] then
    return {}
  end
  local until_ms = limit_of(m[7], 0, MAX_AT)
  if not until_ms then
    return redis.error_reply('EMQARG ' .. meta .. ' paused_until must be an integer in 0..1000000000000000 ' ..
      '(resume the queue, or pause it again)')
  end
  if until_ms > now then
    return {}
  end
  lift_pause = true
end
-- The sets claim moves ids between must be zsets (or absent) before the
-- first write: a ZADD failing after a pop would strand what it popped.
for _, set in ipairs({pending, active, delayed, dead}) do
  if not length_of('ZCARD', set) then
    return redis.error_reply(WRONGTYPE)
  end
end
local limits, broken = limits_of({m[2], m[3], m[4], m[5], m[6]})
if not limits then
  return redis.error_reply('EMQARG ' .. meta .. ' ' .. broken)
end
local default_policy, own_policies
if G then
  local default_text = redis.call('HGET', G.groups, '*')
  default_policy, broken = parse_policy(default_text or '')
  if broken or default_policy.paused then
    return redis.error_reply('EMQARG ' .. G.groups .. ' * ' .. (broken or 'cannot be paused'))
  end
  -- Without a group's own field every policy is the default: the walk
  -- then reads none (a read a visit, in a queue of many small groups).
  own_policies = redis.call('HLEN', G.groups) > (default_text and 1 or 0)
end

if lift_pause then
  redis.call('HDEL', meta, 'paused', 'paused_by', 'paused_reason', 'paused_until')
end

if promote_limit > 0 then
  local due = redis.call('ZRANGEBYSCORE', delayed, '-inf', now, 'LIMIT', 0, promote_limit)
  for _, id in ipairs(due) do
    local row = row_root .. id
    if redis.call('EXISTS', row) == 0 then
      redis.call('ZREM', delayed, id)
    elseif redis.call('TYPE', row).ok ~= 'hash' then
      redis.call('ZREM', delayed, id)
      skip_malformed(row, delayed)
    else
      local f = redis.call('HMGET', row, 'lane', 'group')
      local lane = lane_of(f[1])
      if lane then
        redis.call('ZREM', delayed, id)
        redis.call('HSET', row, 'state', 'pending')
        local g = group_of(f[2])
        if g then
          to_group(g, id, lane)
        else
          redis.call('ZADD', pending, lane, id)
        end
        emit('pending', id, redis.call('HGET', row, 'attempts') or '0')
      else
        redis.log(redis.LOG_WARNING, 'emq claim: ' .. row .. ' lane is not an integer in -1000..1000; ' ..
          'left in ' .. delayed .. ' for an operator')
      end
    end
  end
end

local want = max_count
if limits.max_active then
  want = math.min(want, limits.max_active - redis.call('ZCARD', active))
end
local credit
if limits.rate_max then
  credit = credit_of(limits, now)
  want = math.min(want, math.floor(credit / limits.rate_window_ms))
end

-- Groups due back from gwait (out of tokens, or their count due a check)
-- rejoin the rotation's tail, as due delayed jobs rejoin pending.
if G and promote_limit > 0 then
  for _, g in ipairs(redis.call('ZRANGEBYSCORE', G.wait, '-inf', now, 'LIMIT', 0, promote_limit)) do
    redis.call('ZREM', G.wait, g)
    if group_of(g) then
      redis.call('HDEL', G.grp .. g, 'in')
      local woke, where = wake(g, true)
      if not woke then
        tidy(g, where)
      end
    end
  end
end
-- The ungrouped jobs are one member of a rotation, *.
local ungrouped = G and G.grp .. '*'
if G and redis.call('LLEN', G.rot) > 0 and redis.call('ZCARD', pending) > 0 and length_of('HLEN', ungrouped) and
    redis.call('HGET', ungrouped, 'in') ~= 'rot' then
  redis.call('RPUSH', G.rot, '*')
  redis.call('HSET', ungrouped, 'in', 'rot')
end

local counted = is_counter_of(stats, 'claimed')
local jobs = {}
local claimed = 0
local deadline = now + lease_ms
local deadline_text = string.format('%d', deadline)
local checked = {}  -- groups whose keys this call found well typed

-- Pops from set in rounds (so that ids whose row is gone use nothing) until
-- k jobs are leased or the set is empty; returns leased, popped.
local function lease_from(set, k)
  local leased, popped_n = 0, 0
  while leased < k do
    local popped = redis.call('ZPOPMIN', set, k - leased)
    if #popped == 0 then
      break
    end
    popped_n = popped_n + #popped / 2
    for i = 1, #popped, 2 do
      local id = popped[i]
      local row = row_root .. id
      -- One read of the row for the check and the reply: the writes below
      -- leave these fields as they are.
      local n = length_of('HLEN', row)  -- a hash is never empty
      local kind = not n and 'other' or n > 0 and 'hash' or 'none'
      local exists = kind ~= 'none'
      local f = kind == 'hash' and
        redis.call('HMGET', row, 'attempts', 'lease_epoch', 'payload', 'unique', 'unique_mode', 'group')
      local fault = exists and row_fault(kind, f)
      if fault == 'type' then
        skip_malformed(row, set)
      elseif fault then
        local why = 'row field ' .. fault .. ' is not an integer'
        local attempts = f[1]
        redis.call('HSET', row, 'state', 'dead', 'error', why)
        redis.call('ZADD', dead, now, id)
        emit('dead', id, fault == 'attempts' and '0' or attempts or '0', 'error', why)
        redis.log(redis.LOG_WARNING, 'emq claim: ' .. row .. ' field ' .. fault .. ' is not an integer; sent to ' ..
          dead .. ' for an operator')
      elseif exists then
        -- Both counters were read above and checked: one HSET writes what
        -- two HINCRBYs and an HSET would (the reply reads them as numbers,
        -- as it read HINCRBY's).
        local attempts_text, epoch_text = plus_one(f[1]), plus_one(f[2])
        redis.call('HSET', row, 'attempts', attempts_text, 'lease_epoch', epoch_text, 'state', 'active')
        local attempts, epoch = tonumber(attempts_text), tonumber(epoch_text)
        redis.call('ZADD', active, deadline, id)
        if f[5] == 'started' then
          release_key(id, f[4], f[5])
        end
        local g = f[6] and (checked[f[6]] and f[6] or group_of(f[6]))
        if g then
          checked[g] = true
          redis.call('ZADD', G.gact .. g, deadline_text, id)
        end
        emit('active', id, attempts)
        jobs[#jobs + 1] = id
        jobs[#jobs + 1] = f[3] or ''
        jobs[#jobs + 1] = attempts
        jobs[#jobs + 1] = epoch
        claimed = claimed + 1
        leased = leased + 1
      end
    end
  end
  return leased, popped_n
end

-- A group's bucket brought up to now; nil when a field is broken.
local function group_credit(p, credit, at)
  local cap = p.rate_max * p.rate_window_ms
  if not credit or not at then
    return cap
  end
  credit, at = limit_of(credit, 0, MAX_CREDIT), limit_of(at, 0, MAX_AT)
  if not credit or not at then
    return nil
  end
  return math.min(cap, credit + math.min(math.max(now - at, 0), p.rate_window_ms) * p.rate_max)
end

-- The head leaves the rotation to wait in gwait until t: for its cap, or
-- for its rate's next token.
local function park(h, why, t)
  redis.call('LPOP', G.rot)
  redis.call('HDEL', G.grp .. h, 'deficit')
  redis.call('HSET', G.grp .. h, 'in', why)
  redis.call('ZADD', G.wait, string.format('%d', t), h)
end

local function park_cap(h)
  local first = redis.call('ZRANGE', G.gact .. h, 0, 0, 'WITHSCORES')
  park(h, 'cap', math.max(tonumber(first[2]) or 0, now + 1000))
end

local function park_rate(h, p, credit)
  park(h, 'rate', now + math.floor((p.rate_window_ms - credit + p.rate_max - 1) / p.rate_max))
end

-- The ids the walk popped from groups' zsets: gidx's * goes down by them
-- once, after the walk, not once a visit (in a small gidx, a listpack,
-- each ZINCRBY walks every member).
local star_popped = 0

-- The head's turn (docs/protocol.md, "Groups", claim step 5).
local function serve_head(h)
  local grp = G.grp .. h
  local is_star = h == '*'
  local ok
  if is_star then
    ok = length_of('HLEN', grp)
  else
    ok = group_of(h)
  end
  local st = ok and redis.call('HMGET', grp, 'in', 'deficit', 'rate_credit', 'rate_at')
  if st and st[1] ~= 'rot' then
    redis.call('LPOP', G.rot)
    return
  end
  local p = st and ((is_star or not own_policies) and default_policy or policy_of(h))
  if not p then
    redis.call('LPOP', G.rot)
    if ok then
      redis.call('HDEL', grp, 'in', 'deficit')
    end
    redis.log(redis.LOG_WARNING, 'emq claim: group ' .. h .. ' of ' .. G.q .. ' has a broken policy or keys ' ..
      'of another type; taken out of the rotation until group_set or an enqueue wakes it')
    return
  end
  if p.paused and not is_star then
    redis.call('LPOP', G.rot)
    redis.call('HDEL', grp, 'in', 'deficit')
    tidy(h)
    return
  end
  local src = is_star and pending or G.gq .. h
  local room, credit, tokens
  if p.max_active and not is_star then
    room = p.max_active - redis.call('ZCARD', G.gact .. h)
    if room <= 0 then
      check_count(h)
      room = p.max_active - redis.call('ZCARD', G.gact .. h)
      if room <= 0 then
        return park_cap(h)
      end
    end
  end
  if p.rate_max and not is_star then
    credit = group_credit(p, st[3], st[4])
    if not credit then
      redis.call('LPOP', G.rot)
      redis.call('HDEL', grp, 'in', 'deficit')
      redis.log(redis.LOG_WARNING, 'emq claim: group ' .. h .. ' of ' .. G.q .. ' has a broken bucket; taken ' ..
        'out of the rotation until group_set or an enqueue wakes it')
      return
    end
    tokens = math.floor(credit / p.rate_window_ms)
    if tokens == 0 then
      redis.call('HSET', grp, 'rate_credit', string.format('%d', credit), 'rate_at', string.format('%d', now))
      return park_rate(h, p, credit)
    end
  end
  local deficit = st[2] and limit_of(st[2], 1, 1000) or p.weight
  local k = math.min(deficit, want - claimed, room or deficit, tokens or deficit)
  if not is_star then
    checked[h] = true
  end
  local served, popped = lease_from(src, k)
  if popped > 0 and not is_star then
    redis.call('ZINCRBY', G.idx, -popped, h)
    star_popped = star_popped + popped
  end
  if tokens then
    credit = credit - served * p.rate_window_ms
    redis.call('HSET', grp, 'rate_credit', string.format('%d', credit), 'rate_at', string.format('%d', now))
  end
  if redis.call('EXISTS', src) == 0 then
    redis.call('LPOP', G.rot)
    if is_star then
      redis.call('DEL', grp)
    else
      redis.call('HDEL', grp, 'in', 'deficit')
      tidy(h)
    end
  elseif room and served >= room then
    park_cap(h)
  elseif tokens and served >= tokens then
    park_rate(h, p, credit)
  elseif deficit - served <= 0 then
    redis.call('LPOP', G.rot)
    redis.call('RPUSH', G.rot, h)
    -- Read above and not written since: without it, HDEL changes nothing.
    if st[2] then
      redis.call('HDEL', grp, 'deficit')
    end
  else
    redis.call('HSET', grp, 'deficit', deficit - served)
  end
end

local function walk()
  while claimed < want do
    local h = redis.call('LINDEX', G.rot, 0)
    if not h then
      return
    end
    serve_head(h)
  end
end

if G and redis.call('LLEN', G.rot) > 0 then
  -- A key the caller's ACL refuses stops the walk part-way; what it popped
  -- before still leaves *, and the error is then the script's. pcall hands
  -- a server error over as its text ("ERR ..."): raised as {err = text}, it
  -- is replied as it came, not with a second "ERR ".
  local ok, err = pcall(walk)
  if star_popped > 0 and tonumber(redis.call('ZINCRBY', G.idx, -star_popped, '*')) <= 0 then
    redis.call('ZREM', G.idx, '*')
  end
  if not ok then
    error(type(err) == 'string' and string.match(err, '^%u+ ') and {err = err} or err, 0)
  end
else
  lease_from(pending, want)
end

if claimed > 0 and counted then
  redis.call('HINCRBY', stats, 'claimed', claimed)
elseif claimed > 0 then
  redis.log(redis.LOG_WARNING, 'emq claim: ' .. stats .. ' claimed is not an integer counter; ' .. claimed ..
    ' claims not counted, the field left in place for an operator')
end
if credit then
  redis.call('HSET', meta, 'rate_credit', string.format('%d', credit - claimed * limits.rate_window_ms),
    'rate_at', string.format('%d', now))
end
return jobs
