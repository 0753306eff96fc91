--[[ reap: recover jobs whose lease deadline has passed.
  Their worker died or lost the server. Each counts a failure with error
  "lease expired", then goes dead when its attempts have reached
  max_attempts, else back to pending at its lane. Any number of speakers
  may reap the same queue at once: each id moves once, inside this script.
  Rows that are gone are dropped from active; so are rows that are not
  emq/1 rows (not a hash, or failures not an integer), which are also named
  in the server's log and left in place for an operator.

  KEYS[1]  emq:{q}:active     zset  member id, score lease deadline (ms)
  KEYS[2]  emq:{q}:pending    zset  member id, score lane
  KEYS[3]  emq:{q}:dead       zset  member id, score time of death (ms)
  KEYS[4]  emq:{q}:stats      hash  counters reaped, dead
  KEYS[5]  emq:{q}:job:       the row root; a row is KEYS[5] .. id
  ARGV[1]  max_attempts       integer > 0
  ARGV[2]  limit              integer > 0, ids to look at at most

  Reply:   [requeued, dead] counts
  Errors:  EMQARG when an argument is not an integer > 0
]]
local active, pending, dead, stats, row_root = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]

-- Scripts are not rolled back: an error half-way (HINCRBY on a row some
-- other writer broke) would leave the ids after it unreaped, so a row is
-- checked before anything is written for it.
local function is_row(row)
  if redis.call('TYPE', row).ok ~= 'hash' then
    return false
  end
  local failures = redis.call('HGET', row, 'failures')
  return not failures or (string.match(failures, '^-?%d+$') ~= nil and #failures <= 18)
end

local max_attempts = string.match(ARGV[1] or '', '^%d+$') and tonumber(ARGV[1])
if not max_attempts or max_attempts <= 0 then
  return redis.error_reply('EMQARG max_attempts must be an integer > 0')
end
local limit = string.match(ARGV[2] or '', '^%d+$') and tonumber(ARGV[2])
if not limit or limit <= 0 then
  return redis.error_reply('EMQARG limit must be an integer > 0')
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expired = redis.call('ZRANGEBYSCORE', active, '-inf', '(' .. now, 'LIMIT', 0, limit)
local requeued, died = 0, 0
for _, id in ipairs(expired) do
  redis.call('ZREM', active, id)
  local row = row_root .. id
  local exists = redis.call('EXISTS', row) == 1
  if exists and not is_row(row) then
    redis.log(redis.LOG_WARNING, 'emq reap: ' .. row .. ' is not an emq/1 row (a hash with integer failures); ' ..
      'dropped from ' .. active .. ', left in place for an operator')
  elseif exists then
    local fields = redis.call('HMGET', row, 'attempts', 'lane')
    redis.call('HINCRBY', row, 'failures', 1)
    redis.call('HSET', row, 'error', 'lease expired')
    if (tonumber(fields[1]) or 0) >= max_attempts then
      redis.call('HSET', row, 'state', 'dead')
      redis.call('ZADD', dead, now, id)
      died = died + 1
    else
      redis.call('HSET', row, 'state', 'pending')
      redis.call('ZADD', pending, tonumber(fields[2] or '0') or 0, id)
      requeued = requeued + 1
    end
  end
end

if requeued + died > 0 then
  redis.call('HINCRBY', stats, 'reaped', requeued + died)
end
if died > 0 then
  redis.call('HINCRBY', stats, 'dead', died)
end
return {requeued, died}
