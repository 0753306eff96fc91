--[[ enqueue_lane: admit a job to the pending set at a lane.
  Lower lanes are claimed first; within a lane, byte order of id (mint order).

  KEYS[1]  emq:{q}:job:<id>   hash  the job row
  KEYS[2]  emq:{q}:pending    zset  member id, score lane
  ARGV[1]  id                 branded job id, JOB_...
  ARGV[2]  payload            opaque bytes
  ARGV[3]  lane               integer -1000..1000

  Reply:   1 enqueued
           0 duplicate (the row exists, whatever its state)
  Errors:  EMQKIND when the id is not JOB-namespaced
           EMQARG  when the lane is not an integer in -1000..1000
]]
local row, pending = KEYS[1], KEYS[2]
local id, payload, lane_arg = ARGV[1], ARGV[2], ARGV[3]

if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
local lane = string.match(lane_arg or '', '^-?%d+$') and tonumber(lane_arg)
if not lane or lane < -1000 or lane > 1000 then
  return redis.error_reply('EMQARG lane must be an integer in -1000..1000')
end
if redis.call('EXISTS', row) == 1 then
  return 0
end
redis.call('HSET', row, 'state', 'pending', 'attempts', '0', 'payload', payload)
-- The row carries its lane only when it is not the default, so a lane-0 row
-- is exactly the seed's three-field row.
if lane ~= 0 then
  redis.call('HSET', row, 'lane', lane)
end
redis.call('ZADD', pending, lane, id)
return 1
