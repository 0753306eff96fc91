--[[ enqueue_lane: admit a job to the pending set at a lane.
  Lower lanes are claimed first; within a lane, byte order of id (mint order).

  KEYS[1]  emq:{q}:job:<id>   hash  the job row
  KEYS[2]  emq:{q}:pending    zset  member id, score lane
  KEYS[3]  emq:{q}:events     stream optional: given, the entry pending
  ARGV[1]  id                 branded job id, JOB_...
  ARGV[2]  payload            opaque bytes
  ARGV[3]  lane               integer -1000..1000
  ARGV[4]  events             with the stream: its length, 1..10000000

  Reply:   1 enqueued
           0 duplicate (the row exists, whatever its state)
  Errors:  EMQKIND when the id is not JOB-namespaced
           EMQARG  when the lane is not an integer in -1000..1000
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

local row, pending = KEYS[1], KEYS[2]
local id, payload, lane_arg = ARGV[1], ARGV[2], ARGV[3]

-- [shared job_id: every copy the same, tests/lua/script_copies_test.cpp]
if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
-- [end shared job_id]
-- [shared lane_argument: every copy the same, tests/lua/script_copies_test.cpp]
local lane = string.match(lane_arg or '', '^-?%d+$') and tonumber(lane_arg)
if not lane or lane < -1000 or lane > 1000 then
  return redis.error_reply('EMQARG lane must be an integer in -1000..1000')
end
-- [end shared lane_argument]
if redis.call('EXISTS', row) == 1 then
  return 0
end
redis.call('HSET', row, 'state', 'pending', 'attempts', '0', 'payload', payload)
-- The row carries its lane only when it is not the default, so a lane-0 row
-- is exactly the seed's three-field row.
if lane ~= 0 then
  redis.call('HSET', row, 'lane', lane)
end
redis.call('ZADD', pending, lane, id)
emit('pending', id, '0')
return 1
