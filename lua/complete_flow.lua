--[[ complete_flow: complete, for a job of a flow.
  As complete, and: a child (a row with parent) is kept, state completed
  with its result and no expiry whatever keep_ms, and its id goes to the
  outbox in the same step, so its parent is told even if the speaker dies
  now; outbox_ack later deletes it or sets its expiry. A parent (a row
  with children) has run: its deps and results keys are deleted. As in
  complete, a broken stats counter is left as it is, named in the log.

  KEYS[1]  emq:{q}:job:<id>   hash  the job row
  KEYS[2]  emq:{q}:active     zset  member id, score lease deadline (ms)
  KEYS[3]  emq:{q}:stats      hash  counter completed
  KEYS[4]  emq:{q}:outbox     zset  member id, score time (ms)
  KEYS[5]  emq:{q}:deps:      the deps root; a parent's deps are KEYS[5] .. id
  KEYS[6]  emq:{q}:results:   the results root; its results are KEYS[6] .. id
  KEYS[7]  emq:{q}:uniq:       optional, the uniq root: given, the job's
                                    unique key is freed (only while the lock
                                    holds its id; a window is left to expire)
  KEYS[8]  emq:{q}:events     stream optional (KEYS[7] without the root):
                                    given, the entry completed
  ARGV[1]  id                 branded job id
  ARGV[2]  lease_epoch        the epoch the job was claimed with
  ARGV[3]  keep_ms            integer 0..1000000000000; 0 deletes the row
                              (a child's row: kept, see above)
  ARGV[4]  result             the handler's output
  ARGV[5]  events             with the stream: its length, 1..10000000

  Reply:   1 done
           0 lease lost (state not active or epoch differs: nothing changes)
  Errors:  EMQKIND when the id is not JOB-namespaced
           EMQARG  when keep_ms is not an integer in range
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

local row, active, stats, outbox, deps_root, results_root = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local id, epoch, keep_arg = ARGV[1], ARGV[2], ARGV[3]
-- Given the stream, the result is ARGV[4] only when N follows it.
local result = (not stream or #ARGV > 4) and ARGV[4] or nil

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

-- [shared job_id: every copy the same, tests/lua/script_copies_test.cpp]
if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
-- [end shared job_id]
local keep_ms = string.match(keep_arg or '', '^%d+$') and tonumber(keep_arg)
if not keep_ms or keep_ms > 1000000000000 then
  return redis.error_reply('EMQARG keep_ms must be an integer in 0..1000000000000')
end

local fields = redis.call('HMGET', row, 'state', 'lease_epoch', 'parent', 'children', 'attempts', 'unique',
  'unique_mode')
if fields[1] ~= 'active' or fields[2] ~= epoch then
  return 0
end
-- A child's id goes to the outbox after it leaves active: a ZADD failing
-- there would strand it, so the outbox is checked first.
if fields[3] and not is_zset(outbox) then
  return redis.error_reply(WRONGTYPE)
end
local counted = is_counter_of(stats, 'completed')

redis.call('ZREM', active, id)
if fields[3] then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('HSET', row, 'state', 'completed', 'result', result or '')
  redis.call('PERSIST', row)
  redis.call('ZADD', outbox, now, id)
elseif keep_ms == 0 then
  redis.call('DEL', row)
else
  redis.call('HSET', row, 'state', 'completed', 'result', result or '')
  redis.call('PEXPIRE', row, keep_ms)
end
release_key(id, fields[6], fields[7])
emit('completed', id, fields[5] or '0')
if fields[4] then
  redis.call('DEL', deps_root .. id, results_root .. id)
end
if counted then
  redis.call('HINCRBY', stats, 'completed', 1)
else
  redis.log(redis.LOG_WARNING, 'emq complete_flow: ' .. stats .. ' completed is not an integer counter; ' ..
    'not counted, the field left in place for an operator')
end
return 1
