--[[ enqueue_cron: enqueue one fire of a schedule, at most once per tick.
  Every daemon that runs the schedule calls this for the same tick; the
  marker in the cron hash (name -> <fire_ms>:<id> of the last fire) lets
  exactly one call per tick enqueue, whichever comes first, and it only
  ever moves forward. With overlap skip no job is enqueued while the last
  fire's job is still pending, delayed or active: the tick is taken all the
  same, so it is not fired late.

  KEYS[1]  emq:{q}:job:<id>   hash  the row of the job to enqueue
  KEYS[2]  emq:{q}:pending    zset  member id, score lane
  KEYS[3]  emq:{q}:cron       hash  schedule name -> <fire_ms>:<job id>
  KEYS[4]  emq:{q}:job:       the row root; the last fire's row is KEYS[4] .. its id
  KEYS[5]  emq:{q}:events     stream optional: given, the entry pending of
                                    the job enqueued (reply 1)
  ARGV[1]  id                 branded job id, JOB_... (a fresh one per call)
  ARGV[2]  payload            opaque bytes
  ARGV[3]  name               the schedule, 1-64 bytes of [A-Za-z0-9_.-]
  ARGV[4]  fire_ms            integer 0..1000000000000000, the tick (epoch ms)
  ARGV[5]  lane               integer -1000..1000
  ARGV[6]  overlap            allow or skip
  ARGV[7]  events             with the stream: its length, 1..10000000

  Reply:   1 enqueued: state pending at its lane, schedule = name, the
             marker set to <fire_ms>:<id>
           0 the marker already holds a fire at or after fire_ms (nothing
             changes), or the row exists (the marker becomes <fire_ms>:<id>,
             nothing else changes)
           2 overlap skip and the row of the marker's job is still pending,
             delayed or active: the marker's time becomes fire_ms, its id
             stays; nothing is enqueued
  Errors:  EMQKIND when the id is not JOB-namespaced
           EMQARG  when an argument is malformed
           EMQROW  when the marker is not <fire_ms>:<job id> (nothing is
                   written: a broken marker stops the schedule, for an
                   operator to mend or HDEL)
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

local row, pending, cron, row_root = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, payload, name, fire_arg, lane_arg, overlap = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]

-- [shared job_id: every copy the same, tests/lua/script_copies_test.cpp]
if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
-- [end shared job_id]
if not string.match(name or '', '^[A-Za-z0-9_.%-]+$') or #name > 64 then
  return redis.error_reply('EMQARG name must be 1-64 bytes of [A-Za-z0-9_.-]')
end
local fire_ms = string.match(fire_arg or '', '^%d+$') and tonumber(fire_arg)
if not fire_ms or fire_ms > 1000000000000000 then
  return redis.error_reply('EMQARG fire_ms must be an integer in 0..1000000000000000 (epoch ms)')
end
-- Written as digits, never as Lua's %.14g (which turns 15 digits into 1e+14).
local fire_text = string.format('%d', fire_ms)
-- [shared lane_argument: every copy the same, tests/lua/script_copies_test.cpp]
local lane = string.match(lane_arg or '', '^-?%d+$') and tonumber(lane_arg)
if not lane or lane < -1000 or lane > 1000 then
  return redis.error_reply('EMQARG lane must be an integer in -1000..1000')
end
-- [end shared lane_argument]
if overlap ~= 'allow' and overlap ~= 'skip' then
  return redis.error_reply('EMQARG overlap must be allow or skip')
end

-- The marker is read whole before anything is written: a marker some other
-- writer broke must stop the schedule, never let it fire twice.
local marker = redis.call('HGET', cron, name)
local last_ms, last_id
if marker then
  local ms
  ms, last_id = string.match(marker, '^(%d+):(.+)$')
  last_ms = ms and tonumber(ms)
  if not last_ms or last_ms > 1000000000000000 then
    return redis.error_reply('EMQROW ' .. cron .. ' ' .. name .. ' is not <fire_ms>:<job id>; nothing was written')
  end
  if last_ms >= fire_ms then
    return 0
  end
end

if redis.call('EXISTS', row) == 1 then
  redis.call('HSET', cron, name, fire_text .. ':' .. id)
  return 0
end

if overlap == 'skip' and last_id then
  local last_row = row_root .. last_id
  if redis.call('TYPE', last_row).ok == 'hash' then
    local state = redis.call('HGET', last_row, 'state')
    if state == 'pending' or state == 'delayed' or state == 'active' then
      redis.call('HSET', cron, name, fire_text .. ':' .. last_id)
      return 2
    end
  end
end

redis.call('HSET', row, 'state', 'pending', 'attempts', '0', 'payload', payload, 'schedule', name)
if lane ~= 0 then
  redis.call('HSET', row, 'lane', lane)
end
redis.call('ZADD', pending, lane, id)
redis.call('HSET', cron, name, fire_text .. ':' .. id)
emit('pending', id, '0')
return 1
