--[[ enqueue: admit a job to the pending set at lane 0.
  The seed's transition, behaviour for behaviour: the JOB kind gate, the
  duplicate no-op, the three-field row, the pending entry.

  KEYS[1]  emq:{q}:job:<id>   hash  the job row
  KEYS[2]  emq:{q}:pending    zset  member id, score lane
  ARGV[1]  id                 branded job id, JOB_...
  ARGV[2]  payload            opaque bytes

  Reply:   1 enqueued
           0 duplicate (the row exists, whatever its state)
  Errors:  EMQKIND when the id is not JOB-namespaced
]]
if string.sub(ARGV[1], 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], 'state', 'pending', 'attempts', '0', 'payload', ARGV[2])
redis.call('ZADD', KEYS[2], 0, ARGV[1])
return 1
