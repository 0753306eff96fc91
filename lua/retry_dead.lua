--[[ retry_dead: move dead jobs back to pending, oldest death first.
  Each row gets attempts 0 and state pending, at its lane; its failures and
  last error stay, as history. A dead id whose row is gone is dropped from
  dead; one whose row is not a hash, or whose lane is not an integer in
  -1000..1000, stays in dead, named in the server's log, for an operator
  (it is still one of the limit looked at).

  KEYS[1]  emq:{q}:dead       zset  member id, score time of death (ms)
  KEYS[2]  emq:{q}:pending    zset  member id, score lane
  KEYS[3]  emq:{q}:job:       the row root; a row is KEYS[3] .. id
  KEYS[4]  emq:{q}:events     stream optional: given, the entry pending
                                    of each job moved
  ARGV[1]  limit              integer 1..1000000, jobs to move at most
  ARGV[2]  events             with the stream: its length, 1..10000000

  Reply:   count moved back to pending
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
elseif stream and not ({stream = true, none = true})[redis.call('TYPE', stream).ok] then
  return redis.error_reply(WRONGTYPE)
end
local function emit(event, id, attempt, ...)
  if stream then
    redis.call('XADD', stream, 'MAXLEN', '~', stream_len, '*', 'event', event, 'id', id, 'attempt', attempt, ...)
  end
end

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

local limit = string.match(ARGV[1] or '', '^%d+$') and tonumber(ARGV[1])
if not limit or limit < 1 or limit > 1000000 then
  return redis.error_reply('EMQARG limit must be an integer in 1..1000000')
end

if not is_zset(pending) then
  return redis.error_reply(WRONGTYPE)
end

local moved = 0
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
    redis.call('ZREM', dead, id)
    redis.call('HSET', row, 'state', 'pending', 'attempts', '0')
    redis.call('ZADD', pending, lane, id)
    emit('pending', id, '0')
    moved = moved + 1
  end
end
return moved
