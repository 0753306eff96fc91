--[[ cancel: remove a job that is not running.
  A pending, delayed, dead or kept completed job is deleted with its row.
  A running job is refused: its worker holds the lease.

  KEYS[1]  emq:{q}:job:<id>   hash  the job row
  KEYS[2]  emq:{q}:pending    zset
  KEYS[3]  emq:{q}:delayed    zset
  KEYS[4]  emq:{q}:dead       zset
  ARGV[1]  id                 branded job id

  Reply:   1 removed (row deleted)
           0 no such job
           2 active (refused: it is running)
  Errors:  EMQKIND when the id is not JOB-namespaced
]]
local row, pending, delayed, dead = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id = ARGV[1]

if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end

local state = redis.call('HGET', row, 'state')
if state == 'active' then
  return 2
end
redis.call('ZREM', pending, id)
redis.call('ZREM', delayed, id)
redis.call('ZREM', dead, id)
if not state then
  return 0
end
redis.call('DEL', row)
return 1
