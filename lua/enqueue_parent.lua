--[[ enqueue_parent: admit a job that runs only after its children finish.
  The parent waits in the waiting set, its children's refs in its deps
  set, until child_done has heard of every one; it is enqueued before its
  children, which may live in any queue. A parent may itself be a child
  (parent ref given): a nested flow.

  KEYS[1]  emq:{q}:job:<id>   hash  the parent's row
  KEYS[2]  emq:{q}:waiting    zset  member id, score time enqueued (ms)
  KEYS[3]  emq:{q}:deps:<id>  set   the refs of the children still awaited
  KEYS[4]  emq:{q}:meta       hash  parents = 1 once a parent is enqueued
                                    here; flows = 1 once a child is
  KEYS[5]  emq:{q}:events     stream optional: given, the entry waiting
  ARGV[1]  id                 branded job id, JOB_...
  ARGV[2]  payload            opaque bytes
  ARGV[3]  lane               integer -1000..1000, where it waits once released
  ARGV[4]  on_child_failure   fail, wait or ignore
  ARGV[5]  parent ref         <queue>:<id> of this job's own parent, or ""
  ARGV[6]… child refs         <queue>:<id>, at least one, each once
  ARGV[n]  events             with the stream, last: its length, 1..10000000

  Reply:   1 enqueued: state waiting (row: state, attempts, payload,
             children, on_child_failure, lane if not 0, parent if given),
             id in waiting, the refs in deps, meta parents = 1, and
             flows = 1 when it has a parent
           0 duplicate (the row exists, whatever its state; nothing changes)
  Errors:  EMQKIND when the id is not JOB-namespaced
           EMQARG  when the lane, the policy or a ref is malformed, no child
                   is given, or a child is given twice
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

local row, waiting, deps, meta = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, payload, lane_arg, policy, parent = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
-- The child refs end before the stream's length, when it is given.
local last = stream and #ARGV - 1 or #ARGV

-- A ref is <queue>:<id>: a queue name (1-64 bytes of [A-Za-z0-9_.-], so
-- never a colon) and an id past the wire's JOB gate.
local function is_ref(ref)
  local queue, job = string.match(ref or '', '^([A-Za-z0-9_.%-]+):(.*)$')
  return queue ~= nil and #queue <= 64 and string.sub(job, 1, 3) == 'JOB'
end

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
if policy ~= 'fail' and policy ~= 'wait' and policy ~= 'ignore' then
  return redis.error_reply('EMQARG on_child_failure must be fail, wait or ignore')
end
if parent ~= '' and not is_ref(parent) then
  return redis.error_reply('EMQARG parent ref must be <queue>:<id> with a JOB id, or empty')
end
if last < 6 then
  return redis.error_reply('EMQARG enqueue_parent takes at least one child ref')
end
local seen = {}
for i = 6, last do
  local ref = ARGV[i]
  if not is_ref(ref) then
    return redis.error_reply('EMQARG child ref ' .. (i - 5) .. ' must be <queue>:<id> with a JOB id')
  end
  if seen[ref] then
    return redis.error_reply('EMQARG child ref ' .. ref .. ' is given twice')
  end
  seen[ref] = true
end

if redis.call('EXISTS', row) == 1 then
  return 0
end

local children = last - 5
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', row, 'state', 'waiting', 'attempts', '0', 'payload', payload, 'children', children,
  'on_child_failure', policy)
if lane ~= 0 then
  redis.call('HSET', row, 'lane', lane)
end
if parent ~= '' then
  redis.call('HSET', row, 'parent', parent)
end
redis.call('ZADD', waiting, now, id)
-- A deps set left by an earlier job of the same id must not add to this one.
redis.call('DEL', deps)
-- In slices: unpack of thousands of values would overflow Lua's C stack.
for first = 6, last, 1000 do
  redis.call('SADD', deps, unpack(ARGV, first, math.min(first + 999, last)))
end
-- parents tells a speaker which queues' claimed jobs may need their
-- children's results; flows, which queues' jobs must tell a parent.
if parent ~= '' then
  redis.call('HSET', meta, 'parents', '1', 'flows', '1')
else
  redis.call('HSET', meta, 'parents', '1')
end
emit('waiting', id, '0')
return 1
