--[[ extend: renew the leases of running jobs, in one batch.
  A lease is renewed only while the row is active with the same lease_epoch
  and the id is still in the active set; otherwise it was lost (reaped,
  released, re-claimed or settled) and nothing changes for that job.
  Every job is decided before any lease is renewed, so a row of the wrong
  type stops the call (WRONGTYPE) with nothing written.

  KEYS[1]  emq:{q}:active     zset  member id, score lease deadline (ms)
  KEYS[2]  emq:{q}:job:       the row root; a row is KEYS[2] .. id
  ARGV[1]  lease_ms           integer 1..1000000000000
  ARGV[2]  id_1               branded job id
  ARGV[3]  epoch_1            the lease_epoch it was claimed with
  ...      id_n, epoch_n

  Reply:   array, one per job in order: 1 extended to now+lease_ms,
           0 lease lost
  Errors:  EMQARG  when lease_ms is not an integer in range, or the ids and
                   epochs do not pair up
           EMQKIND when an id is not JOB-namespaced
]]
local active, row_root = KEYS[1], KEYS[2]

local lease_ms = string.match(ARGV[1] or '', '^%d+$') and tonumber(ARGV[1])
if not lease_ms or lease_ms < 1 or lease_ms > 1000000000000 then
  return redis.error_reply('EMQARG lease_ms must be an integer in 1..1000000000000')
end
if #ARGV % 2 ~= 1 then
  return redis.error_reply('EMQARG extend takes lease_ms then id, epoch pairs')
end
for i = 2, #ARGV, 2 do
  if string.sub(ARGV[i], 1, 3) ~= 'JOB' then
    return redis.error_reply('EMQKIND job id must be JOB-namespaced')
  end
end

local held = {}
for i = 2, #ARGV, 2 do
  local id, epoch = ARGV[i], ARGV[i + 1]
  local fields = redis.call('HMGET', row_root .. id, 'state', 'lease_epoch')
  held[#held + 1] = fields[1] == 'active' and fields[2] == epoch and redis.call('ZSCORE', active, id) ~= false
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for j, renew in ipairs(held) do
  if renew then
    redis.call('ZADD', active, 'XX', now + lease_ms, ARGV[2 * j])
  end
  out[j] = renew and 1 or 0
end
return out
