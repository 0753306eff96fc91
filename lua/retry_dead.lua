--[[ retry_dead: move dead jobs back to pending, oldest death first.
  Each row gets attempts 0 and state pending, at its lane; its failures and
  last error stay, as history. A dead id whose row is gone is dropped from
  dead; one whose row is not a hash, or whose lane is not an integer in
  -1000..1000, stays in dead, named in the server's log, for an operator
  (it is still one of the limit looked at).

  KEYS[1]  emq:{q}:dead       zset  member id, score time of death (ms)
  KEYS[2]  emq:{q}:pending    zset  member id, score lane
  KEYS[3]  emq:{q}:job:       the row root; a row is KEYS[3] .. id
  KEYS[4]  emq:{q}:uniq:       optional, the uniq root: given, a job with a
                                    unique key (not a window) takes the key
                                    back, or stays dead when another live
                                    job holds it (skipped)
  KEYS[5]  emq:{q}:events     stream optional (KEYS[4] without the root):
                                    given, the entry pending of each job
                                    moved
  ARGV[1]  limit              integer 1..1000000, jobs to move at most
  ARGV[2]  events             with the stream: its length, 1..10000000

  Reply:   count moved back to pending; given the root, [moved, skipped],
           skipped counting the jobs left dead because another job holds
           their unique key
  Errors:  EMQARG when limit is not an integer in range
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

local dead, pending, row_root = KEYS[1], KEYS[2], KEYS[3]

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

local limit = string.match(ARGV[1] or '', '^%d+$') and tonumber(ARGV[1])
if not limit or limit < 1 or limit > 1000000 then
  return redis.error_reply('EMQARG limit must be an integer in 1..1000000')
end

if not is_zset(pending) then
  return redis.error_reply(WRONGTYPE)
end

local moved, skipped = 0, 0
-- Each row is checked before anything is written for it: scripts are not
-- rolled back, and an HSET failing after the ZREM would strand the id.
for _, id in ipairs(redis.call('ZRANGE', dead, 0, limit - 1)) do
  local row = row_root .. id
  local kind = redis.call('TYPE', row).ok
  local lane = kind == 'hash' and lane_of(redis.call('HGET', row, 'lane'))
  if kind == 'none' then
    redis.call('ZREM', dead, id)
  elseif not lane then
    redis.log(redis.LOG_WARNING, 'emq retry_dead: ' .. row .. ' is not an emq/1 row (a hash whose lane is an ' ..
      'integer in -1000..1000); left in ' .. dead .. ' for an operator')
  else
    local u = uniq_root and redis.call('HMGET', row, 'unique', 'unique_mode') or {}
    local lock = lock_of(u[1], u[2])
    local h = lock and holder_of(lock, u[1], row_root)
    if h and h ~= id then
      skipped = skipped + 1
    else
      redis.call('ZREM', dead, id)
      redis.call('HSET', row, 'state', 'pending', 'attempts', '0')
      redis.call('ZADD', pending, lane, id)
      if lock then
        redis.call('SET', lock, id)
      end
      emit('pending', id, '0')
      moved = moved + 1
    end
  end
end
if uniq_root then
  return {moved, skipped}
end
return moved
