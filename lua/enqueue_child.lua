--[[ enqueue_child: admit a job whose parent waits for it.
  As enqueue_lane, plus the parent's ref in the row, so that whoever
  settles the job can tell the parent (complete_flow, fail_flow), and the
  queue's flows flag, so that flow-aware speakers settle its jobs that way.
  The parent is enqueued first (enqueue_parent), in whatever queue.

  KEYS[1]  emq:{q}:job:<id>   hash  the job row
  KEYS[2]  emq:{q}:pending    zset  member id, score lane
  KEYS[3]  emq:{q}:meta       hash  flows = 1
  KEYS[4]  emq:{q}:events     stream optional: given, the entry pending
  ARGV[1]  id                 branded job id, JOB_...
  ARGV[2]  payload            opaque bytes
  ARGV[3]  lane               integer -1000..1000
  ARGV[4]  parent ref         <queue>:<id> of the parent
  ARGV[5]  events             with the stream: its length, 1..10000000

  Reply:   1 enqueued (state pending at its lane, parent in the row, meta
             flows = 1)
           0 duplicate (the row exists, whatever its state; nothing changes)
  Errors:  EMQKIND when the id is not JOB-namespaced
           EMQARG  when the lane or the parent ref is malformed
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

local row, pending, meta = KEYS[1], KEYS[2], KEYS[3]
local id, payload, lane_arg, parent = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

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
local queue, job = string.match(parent or '', '^([A-Za-z0-9_.%-]+):(.*)$')
if not queue or #queue > 64 or string.sub(job, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQARG parent ref must be <queue>:<id> with a JOB id')
end
if redis.call('EXISTS', row) == 1 then
  return 0
end
redis.call('HSET', row, 'state', 'pending', 'attempts', '0', 'payload', payload, 'parent', parent)
if lane ~= 0 then
  redis.call('HSET', row, 'lane', lane)
end
redis.call('ZADD', pending, lane, id)
redis.call('HSET', meta, 'flows', '1')
emit('pending', id, '0')
return 1
