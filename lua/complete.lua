--[[ complete: settle a job that succeeded.
  Fenced: only the holder of the current lease (state active, same
  lease_epoch) may complete; a late answer changes nothing.

  KEYS[1]  emq:{q}:job:<id>   hash  the job row
  KEYS[2]  emq:{q}:active     zset  member id, score lease deadline (ms)
  KEYS[3]  emq:{q}:stats      hash  counter completed
  ARGV[1]  id                 branded job id
  ARGV[2]  lease_epoch        the epoch the job was claimed with
  ARGV[3]  keep_ms            integer >= 0; 0 deletes the row at once
  ARGV[4]  result             the handler's output, kept when keep_ms > 0

  Reply:   1 done (row deleted, or state completed with result, expiring
             in keep_ms)
           0 lease lost (nothing changes)
  Errors:  EMQKIND when the id is not JOB-namespaced
           EMQARG  when keep_ms is not a non-negative integer
]]
local row, active, stats = KEYS[1], KEYS[2], KEYS[3]
local id, epoch, keep_arg, result = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
local keep_ms = string.match(keep_arg or '', '^%d+$') and tonumber(keep_arg)
if not keep_ms then
  return redis.error_reply('EMQARG keep_ms must be a non-negative integer')
end

local fields = redis.call('HMGET', row, 'state', 'lease_epoch')
if fields[1] ~= 'active' or fields[2] ~= epoch then
  return 0
end

redis.call('ZREM', active, id)
if keep_ms == 0 then
  redis.call('DEL', row)
else
  redis.call('HSET', row, 'state', 'completed', 'result', result or '')
  redis.call('PEXPIRE', row, keep_ms)
end
redis.call('HINCRBY', stats, 'completed', 1)
return 1
