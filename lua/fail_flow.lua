--[[ fail_flow: fail, for a job of a flow.
  As fail, and: when the job goes dead and its row has parent, its id goes
  to the outbox in the same step, so its parent is told even if the
  speaker dies now. A retried job is not news: its parent waits on. A dead
  parent keeps its deps and results, so that an operator's retry runs it
  with its children's results again. As in fail, a row whose attempts,
  failures or lane is malformed is refused (EMQROW) before anything is
  written; a broken stats counter is left as it is.

  KEYS[1]  emq:{q}:job:<id>   hash  the job row
  KEYS[2]  emq:{q}:active     zset  member id, score lease deadline (ms)
  KEYS[3]  emq:{q}:delayed    zset  member id, score due time (ms)
  KEYS[4]  emq:{q}:pending    zset  member id, score lane
  KEYS[5]  emq:{q}:dead       zset  member id, score time of death (ms)
  KEYS[6]  emq:{q}:stats      hash  counters retried, dead
  KEYS[7]  emq:{q}:outbox     zset  member id, score time (ms)
  KEYS[8]  emq:{q}:deps:      the deps root (a dead parent keeps its deps)
  KEYS[9]  emq:{q}:results:   the results root (and its results)
  KEYS[10] emq:{q}:uniq:       optional, the uniq root: given, a job that
                                    goes dead frees its unique key (only
                                    while the lock holds its id; a window is
                                    left to expire)
  KEYS[11] emq:{q}:events     stream optional (KEYS[10] without the root):
                                    given, the entry dead, delayed or
                                    pending, with the error's first 256
                                    bytes
  ARGV[1]  id                 branded job id
  ARGV[2]  lease_epoch        the epoch the job was claimed with
  ARGV[3]  error              error text; the row keeps its first 4096 bytes
  ARGV[4]  max_attempts       integer 1..1000000
  ARGV[5]  backoff_ms         integer 0..1000000000000
  ARGV[6]  permanent          0 or 1
  ARGV[7]  events             with the stream: its length, 1..10000000

  Reply:   0 lease lost (nothing changes)
           1 will retry (state delayed or pending)
           2 dead (state dead, dead score now; a child's id in the outbox)
  Errors:  EMQKIND when the id is not JOB-namespaced
           EMQARG  when max_attempts, backoff_ms or permanent is malformed
           EMQROW  when the row's attempts, failures or lane is malformed
           EMQARG  when events is not an integer in 1..10000000
           WRONGTYPE when the stream is not a stream
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

local row, active, delayed, pending, dead, stats, outbox =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
-- [shared fail_helpers: every copy the same, tests/lua/script_copies_test.cpp]
local id, epoch, err = ARGV[1], ARGV[2], ARGV[3] or ''

-- A set this call adds to must be a zset (or absent) before the first
-- write: ZADD failing after it would leave the job in no set.
local function is_zset(key)
  local kind = redis.call('TYPE', key).ok
  return kind == 'zset' or kind == 'none'
end

-- A counter as HINCRBY takes it (the server's integer form), in 18 digits
-- so that no count of ours can overflow it.
local function is_counter(v)
  return #v <= 18 and (v == '0' or string.match(v, '^-?[1-9]%d*$') ~= nil)
end

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

-- The row's lane: absent is 0; nil when it is not an integer in -1000..1000.
local function lane_of(v)
  local n = not v and 0 or (string.match(v, '^-?%d+$') and tonumber(v))
  return n and n >= -1000 and n <= 1000 and n or nil
end

local function malformed(field, rule)
  return redis.error_reply('EMQROW ' .. row .. ' ' .. field .. ' is not ' .. rule .. '; nothing was written')
end
-- [end shared fail_helpers]

-- [shared job_id: every copy the same, tests/lua/script_copies_test.cpp]
if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
-- [end shared job_id]
-- [shared fail_arguments: every copy the same, tests/lua/script_copies_test.cpp]
local max_attempts = string.match(ARGV[4] or '', '^%d+$') and tonumber(ARGV[4])
if not max_attempts or max_attempts < 1 or max_attempts > 1000000 then
  return redis.error_reply('EMQARG max_attempts must be an integer in 1..1000000')
end
local backoff_ms = string.match(ARGV[5] or '', '^%d+$') and tonumber(ARGV[5])
if not backoff_ms or backoff_ms > 1000000000000 then
  return redis.error_reply('EMQARG backoff_ms must be an integer in 0..1000000000000')
end
local permanent = ARGV[6]
if permanent ~= '0' and permanent ~= '1' then
  return redis.error_reply('EMQARG permanent must be 0 or 1')
end
-- [end shared fail_arguments]

local fields = redis.call('HMGET', row, 'state', 'lease_epoch', 'attempts', 'failures', 'lane', 'parent', 'unique',
  'unique_mode')
local unique_key, unique_mode = fields[7], fields[8]
-- [shared fail_row: every copy the same, tests/lua/script_copies_test.cpp]
if fields[1] ~= 'active' or fields[2] ~= epoch then
  return 0
end
if fields[3] and not is_counter(fields[3]) then
  return malformed('attempts', 'an integer counter')
end
if fields[4] and not is_counter(fields[4]) then
  return malformed('failures', 'an integer counter')
end
local lane = lane_of(fields[5])
if not lane then
  return malformed('lane', 'an integer in -1000..1000')
end
local dies = permanent == '1' or tonumber(fields[3] or '0') >= max_attempts
local counter = dies and 'dead' or 'retried'
-- [end shared fail_row]
if not is_zset(dies and dead or (backoff_ms > 0 and delayed or pending)) or
    (dies and fields[6] and not is_zset(outbox)) then
  return redis.error_reply(WRONGTYPE)
end
-- [shared fail_writes: every copy the same, tests/lua/script_copies_test.cpp]
local counted = is_counter_of(stats, counter)

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREM', active, id)
redis.call('HINCRBY', row, 'failures', 1)
redis.call('HSET', row, 'error', string.sub(err, 1, 4096))

if dies then
  redis.call('HSET', row, 'state', 'dead')
  redis.call('ZADD', dead, now, id)
-- [end shared fail_writes]
  if fields[6] then
    redis.call('ZADD', outbox, now, id)
  end
-- [shared fail_requeue: every copy the same, tests/lua/script_copies_test.cpp]
elseif backoff_ms > 0 then
  redis.call('HSET', row, 'state', 'delayed')
  redis.call('ZADD', delayed, now + backoff_ms, id)
else
  redis.call('HSET', row, 'state', 'pending')
  redis.call('ZADD', pending, lane, id)
end
if dies then
  release_key(id, unique_key, unique_mode)
end
emit(dies and 'dead' or (backoff_ms > 0 and 'delayed' or 'pending'), id, fields[3] or '0', 'error',
  string.sub(err, 1, 256))
if counted then
  redis.call('HINCRBY', stats, counter, 1)
-- [end shared fail_requeue]
else
  redis.log(redis.LOG_WARNING, 'emq fail_flow: ' .. stats .. ' ' .. counter .. ' is not an integer counter; ' ..
    'not counted, the field left in place for an operator')
end
return dies and 2 or 1
