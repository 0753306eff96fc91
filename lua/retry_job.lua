--[[ retry_job: move one dead job back to pending, for an operator's
  "retry this one". The one-job form of retry_dead: the row gets attempts 0
  and state pending, and the id goes to pending at its lane; its failures
  and last error stay, as history. A job that is not in the dead set is
  left alone, whatever its state. A dead id whose row is gone is dropped
  from dead (there is nothing to retry); one whose row is not a hash is
  named in the server's log and left in place for an operator. One whose
  lane is not an integer in -1000..1000 is refused (EMQROW), nothing written.

  KEYS[1]  emq:{q}:job:<id>   hash  the job row
  KEYS[2]  emq:{q}:dead       zset  member id, score time of death (ms)
  KEYS[3]  emq:{q}:pending    zset  member id, score lane
  KEYS[4]  emq:{q}:uniq:       optional, the uniq root: given, a job with a
                                    unique key (not a window) takes the key
                                    back, or stays dead when another live
                                    job holds it
  KEYS[5]  emq:{q}:events     stream optional (KEYS[4] without the root):
                                    given, the entry pending
  ARGV[1]  id                 branded job id
  ARGV[2]  events             with the stream: its length, 1..10000000

  Reply:   1 moved from dead back to pending (given the root, its key's
             lock holds its id)
           0 not in the dead set (nothing changes)
           [2, holder id, holder state] given the root: another live job
             holds its unique key; it stays dead, nothing changes
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

-- from: the set the job leaves (dead here, delayed in promote_job.lua).
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

-- [shared unique_holder: every copy the same, tests/lua/script_copies_test.cpp]
-- Who holds unique key `key` through `lock` (docs/protocol.md, "Who holds
-- a key"): the holder's id and state, or nil when the key is free. A lock
-- with an expiry is a window, held whatever its holder does; any other is
-- a pointer, held while the holder's row carries the key in a state its
-- own mode covers.
local function holder_of(lock, key, row_root)
  local h = redis.pcall('GET', lock)
  if type(h) ~= 'string' or string.sub(h, 1, 3) ~= 'JOB' then
    return nil
  end
  local row = row_root .. h
  local hash = redis.call('TYPE', row).ok == 'hash'
  if redis.call('PTTL', lock) >= 0 then
    return h, hash and redis.call('HGET', row, 'state') or 'gone'
  end
  if not hash then
    return nil
  end
  local f = redis.call('HMGET', row, 'state', 'unique', 'unique_mode')
  local covered = {pending = true, delayed = true, waiting = true, active = f[3] ~= 'started'}
  if f[2] == key and f[1] and covered[f[1]] then
    return h, f[1]
  end
  return nil
end
-- [end shared unique_holder]

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
  redis.log(redis.LOG_WARNING, 'emq retry_job: ' .. row .. ' is not an emq/1 row (a hash); left in ' .. from ..
    ' for an operator')
  return 0
end

local lane = lane_of(redis.call('HGET', row, 'lane'))
-- [shared move_lane: every copy the same, tests/lua/script_copies_test.cpp]
if not lane then
  return redis.error_reply('EMQROW ' .. row .. ' lane is not an integer in -1000..1000; nothing was written')
end

if not is_zset(pending) then
  return redis.error_reply(WRONGTYPE)
end
-- [end shared move_lane]
local u = redis.call('HMGET', row, 'unique', 'unique_mode')
local lock = lock_of(u[1], u[2])
local h, state
if lock then
  h, state = holder_of(lock, u[1], string.match(row, '^(emq:{[^}]*}:job:)') or '')
end
if h and h ~= id then
  return {2, h, state}
end

redis.call('ZREM', from, id)
redis.call('HSET', row, 'state', 'pending', 'attempts', '0')
redis.call('ZADD', pending, lane, id)
if lock then
  redis.call('SET', lock, id)
end
emit('pending', id, '0')
return 1
