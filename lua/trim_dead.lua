--[[ trim_dead: delete dead jobs that died long enough ago, or beyond a count.
  First every dead job older than older_than_ms goes; then, when max_keep
  is > 0, the oldest are deleted until at most max_keep remain.

  KEYS[1]  emq:{q}:dead       zset  member id, score time of death (ms)
  KEYS[2]  emq:{q}:job:       the row root; a row is KEYS[2] .. id
  KEYS[3]  emq:{q}:uniq:       optional, the uniq root: given, a row
                                    deleted frees its unique key, only while
                                    the lock holds its id
  KEYS[4]  emq:{q}:events     stream optional (KEYS[3] without the root):
                                    given, the entry removed of each row
                                    deleted
  ARGV[1]  older_than_ms      integer 0..1000000000000, age on the server's clock
  ARGV[2]  max_keep           integer 0..1000000000; 0 sets no count limit
  ARGV[3]  events             with the stream: its length, 1..10000000

  Reply:   count of dead rows deleted
  Errors:  EMQARG when an argument is not an integer in range
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

-- [shared unique_release: every copy the same, tests/lua/script_copies_test.cpp]
local function release_key(id, key, mode)
  local lock = lock_of(key, mode)
  if lock and redis.pcall('GET', lock) == id then
    redis.call('DEL', lock)
  end
end
-- [end shared unique_release]

local dead, row_root = KEYS[1], KEYS[2]

local older_than = string.match(ARGV[1] or '', '^%d+$') and tonumber(ARGV[1])
local max_keep = string.match(ARGV[2] or '', '^%d+$') and tonumber(ARGV[2])
if not older_than or older_than > 1000000000000 then
  return redis.error_reply('EMQARG older_than_ms must be an integer in 0..1000000000000')
end
if not max_keep or max_keep > 1000000000 then
  return redis.error_reply('EMQARG max_keep must be an integer in 0..1000000000')
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local doomed = redis.call('ZRANGEBYSCORE', dead, '-inf', '(' .. (now - older_than))
if max_keep > 0 then
  local beyond = redis.call('ZCARD', dead) - #doomed - max_keep
  if beyond > 0 then
    local extra = redis.call('ZRANGE', dead, #doomed, #doomed + beyond - 1)
    for _, id in ipairs(extra) do
      doomed[#doomed + 1] = id
    end
  end
end

for _, id in ipairs(doomed) do
  local row = row_root .. id
  -- A row that is not a hash (some other writer's) has attempt 0 and no key.
  local f = (stream or uniq_root) and redis.call('TYPE', row).ok == 'hash' and
    redis.call('HMGET', row, 'attempts', 'unique', 'unique_mode') or {}
  redis.call('ZREM', dead, id)
  if redis.call('DEL', row) == 1 then
    release_key(id, f[2], f[3])
    emit('removed', id, f[1] or '0')
  end
end
return #doomed
