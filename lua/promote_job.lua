--[[ promote_job: run one delayed job now, for an operator's "run it now".
  The id leaves the delayed set for pending at its lane and the row's state
  becomes pending; attempts, failures and the last error stay, since the
  job is the same run that was waiting (a retry's backoff, or a due time a
  producer set). A job that is not in the delayed set is left alone,
  whatever its state. A delayed id whose row is gone is dropped from
  delayed (there is nothing to run); one whose row is not a hash is named
  in the server's log and left in place for an operator. One whose lane is
  not an integer in -1000..1000 is refused (EMQROW), nothing written.

  KEYS[1]  emq:{q}:job:<id>   hash  the job row
  KEYS[2]  emq:{q}:delayed    zset  member id, score due time (ms)
  KEYS[3]  emq:{q}:pending    zset  member id, score lane
  KEYS[4]  emq:{q}:events     stream optional: given, the entry pending
  ARGV[1]  id                 branded job id
  ARGV[2]  events             with the stream: its length, 1..10000000

  Reply:   1 moved from delayed to pending
           0 not in the delayed set (nothing changes)
  Errors:  EMQKIND when the id is not JOB-namespaced
           EMQROW  when the row's lane is malformed
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

-- from: the set the job leaves (delayed here, dead in retry_job.lua).
-- [shared move_keys: every copy the same, tests/lua/script_copies_test.cpp]
local row, from, pending = KEYS[1], KEYS[2], KEYS[3]
local id = ARGV[1] or ''

-- A set this call adds to must be a zset (or absent) before the first
-- write: ZADD failing after it would leave the job in no set.
local function is_zset(key)
  local kind = redis.call('TYPE', key).ok
  return kind == 'zset' or kind == 'none'
end

-- The row's lane: absent is 0; nil when it is not an integer in -1000..1000.
local function lane_of(v)
  local n = not v and 0 or (string.match(v, '^-?%d+$') and tonumber(v))
  return n and n >= -1000 and n <= 1000 and n or nil
end
-- [end shared move_keys]

-- [shared job_id: every copy the same, tests/lua/script_copies_test.cpp]
if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
-- [end shared job_id]

-- [shared move_row: every copy the same, tests/lua/script_copies_test.cpp]
if not redis.call('ZSCORE', from, id) then
  return 0
end
-- Scripts are not rolled back: HSET on a row some other writer made a
-- string would fail after the ZREM. So the row is checked before any write.
local kind = redis.call('TYPE', row).ok
if kind == 'none' then
  redis.call('ZREM', from, id)
  return 0
end
-- [end shared move_row]
if kind ~= 'hash' then
  redis.log(redis.LOG_WARNING, 'emq promote_job: ' .. row .. ' is not an emq/1 row (a hash); left in ' .. from ..
    ' for an operator')
  return 0
end

local f = redis.call('HMGET', row, 'lane', 'attempts')
local lane = lane_of(f[1])
-- [shared move_lane: every copy the same, tests/lua/script_copies_test.cpp]
if not lane then
  return redis.error_reply('EMQROW ' .. row .. ' lane is not an integer in -1000..1000; nothing was written')
end

if not is_zset(pending) then
  return redis.error_reply(WRONGTYPE)
end
-- [end shared move_lane]

redis.call('ZREM', from, id)
redis.call('HSET', row, 'state', 'pending')
redis.call('ZADD', pending, lane, id)
emit('pending', id, f[2] or '0')
return 1
