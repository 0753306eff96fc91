--[[ enqueue_at: admit a job that becomes due at a given time.
  The job waits in the delayed set; claim promotes it to pending, at its
  lane, once due_ms has passed on the server's clock.

  KEYS[1]  emq:{q}:job:<id>   hash  the job row
  KEYS[2]  emq:{q}:delayed    zset  member id, score due time (ms)
  KEYS[3]  emq:{q}:events     stream optional: given, the entry delayed
  ARGV[1]  id                 branded job id, JOB_...
  ARGV[2]  payload            opaque bytes
  ARGV[3]  due_ms             integer 0..1000000000000000, epoch ms (server clock)
  ARGV[4]  lane               integer -1000..1000
  ARGV[5]  events             with the stream: its length, 1..10000000

  Reply:   1 enqueued (state delayed)
           0 duplicate (the row exists, whatever its state)
  Errors:  EMQKIND when the id is not JOB-namespaced
           EMQARG  when due_ms is not an integer in range, or the lane
                   is not an integer in -1000..1000
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

local row, delayed = KEYS[1], KEYS[2]
local id, payload, due_arg, lane_arg = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

-- [shared job_id: every copy the same, tests/lua/script_copies_test.cpp]
if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
-- [end shared job_id]
local due = string.match(due_arg or '', '^%d+$') and tonumber(due_arg)
if not due or due > 1000000000000000 then
  return redis.error_reply('EMQARG due_ms must be an integer in 0..1000000000000000 (epoch ms)')
end
-- [shared lane_argument: every copy the same, tests/lua/script_copies_test.cpp]
local lane = string.match(lane_arg or '', '^-?%d+$') and tonumber(lane_arg)
if not lane or lane < -1000 or lane > 1000 then
  return redis.error_reply('EMQARG lane must be an integer in -1000..1000')
end
-- [end shared lane_argument]
if redis.call('EXISTS', row) == 1 then
  return 0
end
redis.call('HSET', row, 'state', 'delayed', 'attempts', '0', 'payload', payload)
if lane ~= 0 then
  redis.call('HSET', row, 'lane', lane)
end
redis.call('ZADD', delayed, due, id)
emit('delayed', id, '0')
return 1
