--[[ release: give a running job back, for a graceful stop.
  Fenced like complete. The attempt does not count (attempts-1) and no
  failure is recorded; the job goes back to pending at its lane. A row
  whose attempts or lane is malformed is refused (EMQROW) before anything
  is written; a broken stats counter is left as it is, as in complete.

  KEYS[1]  emq:{q}:job:<id>   hash  the job row
  KEYS[2]  emq:{q}:active     zset  member id, score lease deadline (ms)
  KEYS[3]  emq:{q}:pending    zset  member id, score lane
  KEYS[4]  emq:{q}:stats      hash  counter released
  KEYS[5]  emq:{q}:events     stream optional: given, the entry pending
  ARGV[1]  id                 branded job id
  ARGV[2]  lease_epoch        the epoch the job was claimed with
  ARGV[3]  events             with the stream: its length, 1..10000000

  Reply:   1 given back to pending
           0 lease lost (nothing changes)
  Errors:  EMQKIND when the id is not JOB-namespaced
           EMQROW  when the row's attempts or lane is malformed
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

local row, active, pending, stats = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, epoch = ARGV[1], ARGV[2]

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

-- [shared job_id: every copy the same, tests/lua/script_copies_test.cpp]
if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
-- [end shared job_id]

local fields = redis.call('HMGET', row, 'state', 'lease_epoch', 'attempts', 'lane')
if fields[1] ~= 'active' or fields[2] ~= epoch then
  return 0
end
if fields[3] and not is_counter(fields[3]) then
  return malformed('attempts', 'an integer counter')
end
local lane = lane_of(fields[4])
if not lane then
  return malformed('lane', 'an integer in -1000..1000')
end
if not is_zset(pending) then
  return redis.error_reply(WRONGTYPE)
end
local counted = is_counter_of(stats, 'released')

redis.call('ZREM', active, id)
local attempts = redis.call('HINCRBY', row, 'attempts', -1)
redis.call('HSET', row, 'state', 'pending')
redis.call('ZADD', pending, lane, id)
emit('pending', id, attempts)
if counted then
  redis.call('HINCRBY', stats, 'released', 1)
else
  redis.log(redis.LOG_WARNING, 'emq release: ' .. stats .. ' released is not an integer counter; ' ..
    'not counted, the field left in place for an operator')
end
return 1
