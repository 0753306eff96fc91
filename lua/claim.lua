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
  KEYS[7]  emq:{q}:uniq:       optional, the uniq root: given, a job
                                    claimed in unique_mode started frees its
                                    key (the lock root .. its unique), only
                                    while the lock holds its id
  KEYS[8]  emq:{q}:events     stream optional (KEYS[7] without the root):
                                    given, the entries pending (each job
                                    promoted) and active (each job claimed),
                                    in that order
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
]]
-- Events (PROTOCOL.md, "Events"): given the queue's stream as the last KEY,
-- the last ARGV is its length, and each state this call writes is appended.
local WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value'
local stream = string.match(KEYS[#KEYS], '^emq:{[^}]*}:events$') and KEYS[#KEYS]
local stream_len = stream and string.match(ARGV[#ARGV] or '', '^%d+$') and tonumber(ARGV[#ARGV])
if stream and not (stream_len and stream_len >= 1 and stream_len <= 10000000) then
  return redis.error_reply('EMQARG events must be an integer in 1..10000000')
elseif stream and not ({stream = true, none = true})[redis.call('TYPE', stream).ok] then
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

local pending, active, delayed, meta, stats, row_root =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]

-- A counter as HINCRBY takes it (the server's integer form), in 18 digits
-- so that no count of ours can overflow it.
local function is_counter(v)
  return #v <= 18 and (v == '0' or string.match(v, '^-?[1-9]%d*$') ~= nil)
end

-- Scripts are not rolled back: an error half-way (HINCRBY on a row some
-- other writer broke) would leave every id popped with it in no set at
-- all. So a row is checked before anything is written for it: nil for a
-- hash whose counters are integers, else 'type' (not a hash) or the name
-- of the first counter that is not.
local function row_fault(row)
  if redis.call('TYPE', row).ok ~= 'hash' then
    return 'type'
  end
  local f = redis.call('HMGET', row, 'attempts', 'lease_epoch')
  if f[1] and not is_counter(f[1]) then
    return 'attempts'
  elseif f[2] and not is_counter(f[2]) then
    return 'lease_epoch'
  end
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

-- The sets claim moves ids between must be zsets (or absent) before the
-- first write: a ZADD failing after a pop would strand what it popped.
local function is_zset(key)
  local kind = redis.call('TYPE', key).ok
  return kind == 'zset' or kind == 'none'
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
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
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
for _, set in ipairs({pending, active, delayed, dead}) do
  if not is_zset(set) then
    return redis.error_reply(WRONGTYPE)
  end
end
local limits, broken = limits_of({m[2], m[3], m[4], m[5], m[6]})
if not limits then
  return redis.error_reply('EMQARG ' .. meta .. ' ' .. broken)
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
      local lane = lane_of(redis.call('HGET', row, 'lane'))
      if lane then
        redis.call('ZREM', delayed, id)
        redis.call('HSET', row, 'state', 'pending')
        redis.call('ZADD', pending, lane, id)
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

local counted = is_counter_of(stats, 'claimed')
local jobs = {}
local claimed = 0
local deadline = now + lease_ms
-- Pop in rounds so that ids whose row is gone do not shorten the batch.
while claimed < want do
  local popped = redis.call('ZPOPMIN', pending, want - claimed)
  if #popped == 0 then
    break
  end
  for i = 1, #popped, 2 do
    local id = popped[i]
    local row = row_root .. id
    local exists = redis.call('EXISTS', row) == 1
    local fault = exists and row_fault(row)
    if fault == 'type' then
      skip_malformed(row, pending)
    elseif fault then
      local why = 'row field ' .. fault .. ' is not an integer'
      local attempts = redis.call('HGET', row, 'attempts')
      redis.call('HSET', row, 'state', 'dead', 'error', why)
      redis.call('ZADD', dead, now, id)
      emit('dead', id, fault == 'attempts' and '0' or attempts or '0', 'error', why)
      redis.log(redis.LOG_WARNING, 'emq claim: ' .. row .. ' field ' .. fault .. ' is not an integer; sent to ' ..
        dead .. ' for an operator')
    elseif exists then
      local attempts = redis.call('HINCRBY', row, 'attempts', 1)
      local epoch = redis.call('HINCRBY', row, 'lease_epoch', 1)
      redis.call('HSET', row, 'state', 'active')
      redis.call('ZADD', active, deadline, id)
      local f = redis.call('HMGET', row, 'payload', 'unique', 'unique_mode')
      if f[3] == 'started' then
        release_key(id, f[2], f[3])
      end
      emit('active', id, attempts)
      jobs[#jobs + 1] = id
      jobs[#jobs + 1] = f[1] or ''
      jobs[#jobs + 1] = attempts
      jobs[#jobs + 1] = epoch
      claimed = claimed + 1
    end
  end
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
