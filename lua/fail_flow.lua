--[[ fail_flow: fail, for a job of a flow.
  As fail, and: when the job goes dead and its row has parent, its id goes
  to the outbox in the same step, so its parent is told even if the
  speaker dies now. A retried job is not news: its parent waits on. A dead
  parent keeps its deps and results, so that an operator's retry runs it
  with its children's results again.
  Every number read from the row is checked before anything is written;
  a stats counter some other writer broke is skipped and named in the
  server's log, the job settled all the same.

  KEYS[1]  emq:{q}:job:<id>   hash  the job row
  KEYS[2]  emq:{q}:active     zset  member id, score lease deadline (ms)
  KEYS[3]  emq:{q}:delayed    zset  member id, score due time (ms)
  KEYS[4]  emq:{q}:pending    zset  member id, score lane
  KEYS[5]  emq:{q}:dead       zset  member id, score time of death (ms)
  KEYS[6]  emq:{q}:stats      hash  counters retried, dead
  KEYS[7]  emq:{q}:outbox     zset  member id, score time (ms)
  KEYS[8]  emq:{q}:deps:      the deps root (kept: see above)
  KEYS[9]  emq:{q}:results:   the results root (kept: see above)
  ARGV[1]  id                 branded job id
  ARGV[2]  lease_epoch        the epoch the job was claimed with
  ARGV[3]  error              error text; the row keeps its first 4096 bytes
  ARGV[4]  max_attempts       integer > 0
  ARGV[5]  backoff_ms         integer 0..999999999999999
  ARGV[6]  permanent          0 or 1

  Reply:   0 lease lost (nothing changes)
           1 will retry (state delayed or pending)
           2 dead (state dead, dead score now; a child's id in the outbox)
  Errors:  EMQKIND when the id is not JOB-namespaced
           EMQARG  when max_attempts, backoff_ms or permanent is malformed
           EMQROW  when attempts, failures or lane in the row is not an
                   integer (lane: in -1000..1000): nothing changes
]]
local row, active, delayed, pending, dead, stats, outbox =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local id, epoch, err = ARGV[1], ARGV[2], ARGV[3] or ''

if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
local max_attempts = string.match(ARGV[4] or '', '^%d+$') and #ARGV[4] <= 18 and tonumber(ARGV[4])
if not max_attempts or max_attempts <= 0 then
  return redis.error_reply('EMQARG max_attempts must be an integer > 0')
end
local backoff_ms = string.match(ARGV[5] or '', '^%d+$') and #ARGV[5] <= 15 and tonumber(ARGV[5])
if not backoff_ms then
  return redis.error_reply('EMQARG backoff_ms must be an integer in 0..999999999999999')
end
local permanent = ARGV[6]
if permanent ~= '0' and permanent ~= '1' then
  return redis.error_reply('EMQARG permanent must be 0 or 1')
end

if redis.call('TYPE', row).ok ~= 'hash' then
  return 0
end
local f = redis.call('HMGET', row, 'state', 'lease_epoch', 'attempts', 'lane', 'failures', 'parent')
if f[1] ~= 'active' or f[2] ~= epoch then
  return 0
end

local function integer(v, min, max)
  local n = v and string.match(v, '^-?%d+$') and #v <= 18 and tonumber(v)
  return n and n >= min and n <= max and n
end
local function malformed(what)
  return redis.error_reply('EMQROW ' .. row .. ' is not an emq/1 row: ' .. what .. '; nothing changed')
end
local attempts = integer(f[3] or '0', -1e17, 1e17)
if not attempts then
  return malformed('attempts is not an integer')
end
local lane = integer(f[4] or '0', -1000, 1000)
if not lane then
  return malformed('lane is not an integer in -1000..1000')
end
if f[5] and not integer(f[5], -1e17, 1e17) then
  return malformed('failures is not an integer')
end

local function is_counter_of(hash, field)
  local kind = redis.call('TYPE', hash).ok
  if kind == 'none' then
    return true
  end
  if kind ~= 'hash' then
    return false
  end
  return integer(redis.call('HGET', hash, field) or '0', -1e17, 1e17) ~= nil
end
local function count(field)
  if is_counter_of(stats, field) then
    redis.call('HINCRBY', stats, field, 1)
  else
    redis.log(redis.LOG_WARNING, 'emq fail_flow: ' .. stats .. ' ' .. field .. ' is not an integer counter; ' ..
      'not counted, the field left in place for an operator')
  end
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREM', active, id)
redis.call('HINCRBY', row, 'failures', 1)
redis.call('HSET', row, 'error', string.sub(err, 1, 4096))

if permanent == '1' or attempts >= max_attempts then
  redis.call('HSET', row, 'state', 'dead')
  redis.call('ZADD', dead, now, id)
  if f[6] then
    redis.call('ZADD', outbox, now, id)
  end
  count('dead')
  return 2
end

if backoff_ms > 0 then
  redis.call('HSET', row, 'state', 'delayed')
  redis.call('ZADD', delayed, now + backoff_ms, id)
else
  redis.call('HSET', row, 'state', 'pending')
  redis.call('ZADD', pending, lane, id)
end
count('retried')
return 1
