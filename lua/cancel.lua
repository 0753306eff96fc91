--[[ cancel: remove a job that is not running.
  A pending, delayed, dead or kept completed job is deleted with its row.
  A running job is refused: its worker holds the lease.
  Given the outbox (a flow-aware speaker passes it), a child (a row with
  parent) is not deleted but moved to dead with error "cancelled" and added
  to the outbox, so its parent hears of it and an operator can still retry
  it; a completed child whose parent has not been told yet (its id still in
  the outbox) is refused, since outbox_ack removes it once its parent has
  its result. A waiting parent is refused too: its id is in the waiting
  set, which cancel is not given, and deleting its row would strand it.

  KEYS[1]  emq:{q}:job:<id>   hash  the job row
  KEYS[2]  emq:{q}:pending    zset
  KEYS[3]  emq:{q}:delayed    zset
  KEYS[4]  emq:{q}:dead       zset  member id, score time of death (ms)
  KEYS[5]  emq:{q}:outbox     zset  optional: member id, score time (ms)
  ARGV[1]  id                 branded job id

  Reply:   1 removed (row deleted; a child given the outbox: dead, with
             error cancelled, in the outbox)
           0 no such job
           2 refused: it is active (its worker holds the lease), a
             waiting parent, or, given the outbox, a completed child
             still in it
  Errors:  EMQKIND when the id is not JOB-namespaced
]]
local row, pending, delayed, dead, outbox = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id = ARGV[1]

if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end

local f = redis.call('HMGET', row, 'state', 'parent')
local state, child = f[1], outbox and f[2]
if state == 'active' or state == 'waiting' then
  return 2
end
if child and state == 'completed' and redis.call('ZSCORE', outbox, id) then
  return 2
end
redis.call('ZREM', pending, id)
redis.call('ZREM', delayed, id)
if not state then
  redis.call('ZREM', dead, id)
  return 0
end
if child and state ~= 'completed' then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('HSET', row, 'state', 'dead', 'error', 'cancelled')
  redis.call('ZADD', dead, now, id)
  redis.call('ZADD', outbox, now, id)
  return 1
end
redis.call('ZREM', dead, id)
redis.call('DEL', row)
return 1
