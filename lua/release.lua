--[[ release: give a running job back, for a graceful stop.
  Fenced like complete. The attempt does not count (attempts-1) and no
  failure is recorded; the job goes back to pending at its lane.

  KEYS[1]  emq:{q}:job:<id>   hash  the job row
  KEYS[2]  emq:{q}:active     zset  member id, score lease deadline (ms)
  KEYS[3]  emq:{q}:pending    zset  member id, score lane
  KEYS[4]  emq:{q}:stats      hash  counter released
  ARGV[1]  id                 branded job id
  ARGV[2]  lease_epoch        the epoch the job was claimed with

  Reply:   1 given back to pending
           0 lease lost (nothing changes)
  Errors:  EMQKIND when the id is not JOB-namespaced
]]
local row, active, pending, stats = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, epoch = ARGV[1], ARGV[2]

if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end

local fields = redis.call('HMGET', row, 'state', 'lease_epoch', 'lane')
if fields[1] ~= 'active' or fields[2] ~= epoch then
  return 0
end

redis.call('ZREM', active, id)
redis.call('HINCRBY', row, 'attempts', -1)
redis.call('HSET', row, 'state', 'pending')
redis.call('ZADD', pending, tonumber(fields[3] or '0') or 0, id)
redis.call('HINCRBY', stats, 'released', 1)
return 1
