--[[ fail: settle a job that failed; retry it or send it to dead.
  Fenced like complete. The job is dead when permanent is 1 or its
  attempts have reached max_attempts; otherwise it is retried, through the
  delayed set when backoff_ms > 0, else straight back to pending at its lane.

  KEYS[1]  emq:{q}:job:<id>   hash  the job row
  KEYS[2]  emq:{q}:active     zset  member id, score lease deadline (ms)
  KEYS[3]  emq:{q}:delayed    zset  member id, score due time (ms)
  KEYS[4]  emq:{q}:pending    zset  member id, score lane
  KEYS[5]  emq:{q}:dead       zset  member id, score time of death (ms)
  KEYS[6]  emq:{q}:stats      hash  counters retried, dead
  ARGV[1]  id                 branded job id
  ARGV[2]  lease_epoch        the epoch the job was claimed with
  ARGV[3]  error              error text; the row keeps its first 4096 bytes
  ARGV[4]  max_attempts       integer > 0
  ARGV[5]  backoff_ms         integer >= 0
  ARGV[6]  permanent          0 or 1

  Reply:   0 lease lost (nothing changes)
           1 will retry (state delayed or pending)
           2 dead (state dead, dead score now)
  Errors:  EMQKIND when the id is not JOB-namespaced
           EMQARG  when max_attempts, backoff_ms or permanent is malformed
]]
local row, active, delayed, pending, dead, stats =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local id, epoch, err = ARGV[1], ARGV[2], ARGV[3] or ''

if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
local max_attempts = string.match(ARGV[4] or '', '^%d+$') and tonumber(ARGV[4])
if not max_attempts or max_attempts <= 0 then
  return redis.error_reply('EMQARG max_attempts must be an integer > 0')
end
local backoff_ms = string.match(ARGV[5] or '', '^%d+$') and tonumber(ARGV[5])
if not backoff_ms then
  return redis.error_reply('EMQARG backoff_ms must be a non-negative integer')
end
local permanent = ARGV[6]
if permanent ~= '0' and permanent ~= '1' then
  return redis.error_reply('EMQARG permanent must be 0 or 1')
end

local fields = redis.call('HMGET', row, 'state', 'lease_epoch', 'attempts', 'lane')
if fields[1] ~= 'active' or fields[2] ~= epoch then
  return 0
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREM', active, id)
redis.call('HINCRBY', row, 'failures', 1)
redis.call('HSET', row, 'error', string.sub(err, 1, 4096))

if permanent == '1' or (tonumber(fields[3]) or 0) >= max_attempts then
  redis.call('HSET', row, 'state', 'dead')
  redis.call('ZADD', dead, now, id)
  redis.call('HINCRBY', stats, 'dead', 1)
  return 2
end

if backoff_ms > 0 then
  redis.call('HSET', row, 'state', 'delayed')
  redis.call('ZADD', delayed, now + backoff_ms, id)
else
  redis.call('HSET', row, 'state', 'pending')
  redis.call('ZADD', pending, tonumber(fields[4] or '0') or 0, id)
end
redis.call('HINCRBY', stats, 'retried', 1)
return 1
