--[[ progress: store how far a running job got, as its handler reported it.
  Fenced as extend is: only while the row is active with the same
  lease_epoch and the id is still in the active set; a late report of a
  lost lease changes nothing. The value is opaque text, at most 1024
  bytes, kept in the row's progress field (the latest wins). Given the
  queue's event stream, the report is appended to it as well, as a
  progress entry, and the stream is trimmed to about N entries.

  KEYS[1]  emq:{q}:job:<id>   hash    the job row
  KEYS[2]  emq:{q}:active     zset    member id, score lease deadline (ms)
  KEYS[3]  emq:{q}:events     stream  optional: the queue's events
  ARGV[1]  id                 branded job id
  ARGV[2]  lease_epoch        the lease_epoch it was claimed with
  ARGV[3]  value              the report, 0..1024 bytes
  ARGV[4]  events             with the stream: its length, 1..10000000

  Reply:   1 stored (and, given the stream, appended)
           0 lease lost (nothing changes); a row that is not a hash is no
             lease this caller holds
  Errors:  EMQKIND when the id is not JOB-namespaced
           EMQARG  when the value is over 1024 bytes
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

local row, active = KEYS[1], KEYS[2]
local id, epoch = ARGV[1] or '', ARGV[2]
-- Given the stream, the value is ARGV[3] only when N follows it.
local value = (not stream or #ARGV > 3) and ARGV[3] or ''

-- [shared job_id: every copy the same, tests/lua/script_copies_test.cpp]
if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
-- [end shared job_id]
if #value > 1024 then
  return redis.error_reply('EMQARG progress value must be at most 1024 bytes')
end

-- A row of the wrong type is not a lease this caller holds.
if redis.call('TYPE', row).ok ~= 'hash' then
  return 0
end
local f = redis.call('HMGET', row, 'state', 'lease_epoch', 'attempts')
if f[1] ~= 'active' or f[2] ~= epoch or not redis.call('ZSCORE', active, id) then
  return 0
end

redis.call('HSET', row, 'progress', value)
emit('progress', id, f[3] or '0', 'progress', value)
return 1
