--[[ reap: recover jobs whose lease deadline has passed.
  Their worker died or lost the server. Each counts a failure with error
  "lease expired", then goes dead when its attempts have reached
  max_attempts, else back to pending at its lane. Any number of speakers
  may reap the same queue at once: each id moves once, inside this script.
  Rows that are gone are dropped from active; so are keys that are not
  hashes, which are also named in the server's log and left in place for
  an operator. A row that is a hash whose attempts or failures is not an
  integer goes to dead (score now, state dead, error "row field <field>
  is not an integer", nothing else written), so that no job is ever in no
  set. A row whose lane is not an integer in -1000..1000 stays in active,
  named in the log, for an operator. The stats counters reaped and dead count the
  jobs moved; a broken one is left as it is and named in the log, checked
  before anything is written.

  KEYS[1]  emq:{q}:active     zset  member id, score lease deadline (ms)
  KEYS[2]  emq:{q}:pending    zset  member id, score lane
  KEYS[3]  emq:{q}:dead       zset  member id, score time of death (ms)
  KEYS[4]  emq:{q}:stats      hash  counters reaped, dead
  KEYS[5]  emq:{q}:job:       the row root; a row is KEYS[5] .. id
  KEYS[6]  emq:{q}:outbox     zset  optional (flow-aware speakers pass it): a
                                    child (a row with parent) sent to dead is
                                    added, member id, score now
  KEYS[7]  emq:{q}:uniq:       optional, the uniq root (after the outbox,
                                    when given): a job sent to dead frees
                                    its unique key, only while the lock
                                    holds its id
  KEYS[8]  emq:{q}:events     stream optional, last: given, the entry
                                    pending or dead of each job moved,
                                    error "lease expired"
  ARGV[1]  max_attempts       integer 1..1000000
  ARGV[2]  limit              integer 1..1000000, ids to look at at most
  ARGV[3]  events             with the stream: its length, 1..10000000

  Reply:   [requeued, dead] counts
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
elseif stream and not ({stream = true, none = true})[redis.call('TYPE', stream).ok] then
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

local active, pending, dead, stats, row_root = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local outbox = KEYS[6] ~= stream and KEYS[6] ~= uniq_root and KEYS[6] or nil

-- A set this call adds to must be a zset (or absent) before the first
-- write: ZADD failing after it would leave the job in no set.
local function is_zset(key)
  local kind = redis.call('TYPE', key).ok
  return kind == 'zset' or kind == 'none'
end

-- A counter as HINCRBY takes it (the server's integer form), in 18 digits
-- so that no count of ours can overflow it.
local function is_counter(v)
  return #v <= 18 and (v == '0' or string.match(v, '^-?[1-9]%d*$') ~= nil)
end

local function is_counter_of(hash, field)
  local kind = redis.call('TYPE', hash).ok
  if kind == 'none' then
    return true
  end
  if kind ~= 'hash' then
    return false
  end
  local v = redis.call('HGET', hash, field)
  return not v or is_counter(v)
end

-- The row's lane: absent is 0; nil when it is not an integer in -1000..1000.
local function lane_of(v)
  local n = not v and 0 or (string.match(v, '^-?%d+$') and tonumber(v))
  return n and n >= -1000 and n <= 1000 and n or nil
end

local function warn(text)
  redis.log(redis.LOG_WARNING, 'emq reap: ' .. text)
end

local max_attempts = string.match(ARGV[1] or '', '^%d+$') and tonumber(ARGV[1])
if not max_attempts or max_attempts < 1 or max_attempts > 1000000 then
  return redis.error_reply('EMQARG max_attempts must be an integer in 1..1000000')
end
local limit = string.match(ARGV[2] or '', '^%d+$') and tonumber(ARGV[2])
if not limit or limit < 1 or limit > 1000000 then
  return redis.error_reply('EMQARG limit must be an integer in 1..1000000')
end

if not is_zset(pending) or not is_zset(dead) or (outbox and not is_zset(outbox)) then
  return redis.error_reply(WRONGTYPE)
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expired = redis.call('ZRANGEBYSCORE', active, '-inf', '(' .. now, 'LIMIT', 0, limit)
local counts_reaped, counts_dead = is_counter_of(stats, 'reaped'), is_counter_of(stats, 'dead')
local requeued, died = 0, 0
-- Scripts are not rolled back: an error half-way (HINCRBY on a row some
-- other writer broke) would leave the ids after it unreaped, so each row is
-- checked before anything is written for it.
for _, id in ipairs(expired) do
  local row = row_root .. id
  local kind = redis.call('TYPE', row).ok
  local f = kind == 'hash' and redis.call('HMGET', row, 'attempts', 'failures', 'lane', 'parent', 'unique',
    'unique_mode') or {}
  local lane = lane_of(f[3])
  local fault = (f[1] and not is_counter(f[1]) and 'attempts') or (f[2] and not is_counter(f[2]) and 'failures')
  if kind == 'none' then
    redis.call('ZREM', active, id)
  elseif kind ~= 'hash' then
    redis.call('ZREM', active, id)
    warn(row .. ' is not a hash, so not an emq/1 row; dropped from ' .. active .. ', left in place for an operator')
  elseif fault then
    local why = 'row field ' .. fault .. ' is not an integer'
    redis.call('ZREM', active, id)
    redis.call('HSET', row, 'state', 'dead', 'error', why)
    redis.call('ZADD', dead, now, id)
    emit('dead', id, fault == 'attempts' and '0' or f[1] or '0', 'error', why)
    warn(row .. ' field ' .. fault .. ' is not an integer; sent to ' .. dead .. ' for an operator')
  elseif not lane then
    warn(row .. ' lane is not an integer in -1000..1000; left in ' .. active .. ' for an operator')
  else
    redis.call('ZREM', active, id)
    redis.call('HINCRBY', row, 'failures', 1)
    redis.call('HSET', row, 'error', 'lease expired')
    if tonumber(f[1] or '0') >= max_attempts then
      redis.call('HSET', row, 'state', 'dead')
      redis.call('ZADD', dead, now, id)
      if outbox and f[4] then
        redis.call('ZADD', outbox, now, id)
      end
      release_key(id, f[5], f[6])
      emit('dead', id, f[1] or '0', 'error', 'lease expired')
      died = died + 1
    else
      redis.call('HSET', row, 'state', 'pending')
      redis.call('ZADD', pending, lane, id)
      emit('pending', id, f[1] or '0', 'error', 'lease expired')
      requeued = requeued + 1
    end
  end
end

local function count(counted, field, n)
  if n > 0 and counted then
    redis.call('HINCRBY', stats, field, n)
  elseif n > 0 then
    warn(stats .. ' ' .. field .. ' is not an integer counter; ' .. n .. ' not counted, the field left in place ' ..
      'for an operator')
  end
end
count(counts_reaped, 'reaped', requeued + died)
count(counts_dead, 'dead', died)
return {requeued, died}
