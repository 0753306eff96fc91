--[[ retry_dead: move dead jobs back to pending, oldest death first.
  Each row gets attempts 0 and state pending, at its lane; its failures and
  last error stay, as history.

  KEYS[1]  emq:{q}:dead       zset  member id, score time of death (ms)
  KEYS[2]  emq:{q}:pending    zset  member id, score lane
  KEYS[3]  emq:{q}:job:       the row root; a row is KEYS[3] .. id
  ARGV[1]  limit              integer > 0, jobs to move at most

  Reply:   count moved back to pending
  Errors:  EMQARG when limit is not an integer > 0
]]
local dead, pending, row_root = KEYS[1], KEYS[2], KEYS[3]

local limit = string.match(ARGV[1] or '', '^%d+$') and tonumber(ARGV[1])
if not limit or limit <= 0 then
  return redis.error_reply('EMQARG limit must be an integer > 0')
end

local moved = 0
for _, id in ipairs(redis.call('ZRANGE', dead, 0, limit - 1)) do
  redis.call('ZREM', dead, id)
  local row = row_root .. id
  if redis.call('EXISTS', row) == 1 then
    redis.call('HSET', row, 'state', 'pending', 'attempts', '0')
    redis.call('ZADD', pending, tonumber(redis.call('HGET', row, 'lane') or '0') or 0, id)
    moved = moved + 1
  end
end
return moved
