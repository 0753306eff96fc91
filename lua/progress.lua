--[[ progress: store how far a running job got, as its handler reported.
  Fenced as extend is: only while the row is active with the same
  lease_epoch and the id is still in the active set; a late report of a
  lost lease changes nothing. The value is opaque text, at most 1024
  bytes, kept in the row's progress field (the latest wins). Given the
  queue's event stream, the report is appended to it as well, as a
  progress entry, and the stream is trimmed to about N entries.

  KEYS[1]  emq:{q}:job:<id>   hash    the job row
  KEYS[2]  emq:{q}:active     zset    member id, score lease deadline (ms)
  KEYS[3]  emq:{q}:events     stream  optional: the queue's events
  ARGV[1]  id                 branded job id
  ARGV[2]  lease_epoch        the lease_epoch it was claimed with
  ARGV[3]  value              the report, 0..1024 bytes
  ARGV[4]  N                  with KEYS[3]: the stream's approximate
                              maximum length, an integer 1..10000000

  Reply:   1 stored (and, given the stream, appended)
           0 lease lost (nothing changes)
  Errors:  EMQKIND when the id is not JOB-namespaced
           EMQARG  when the value is over 1024 bytes, or the stream is
                   given without N in range
]]
local row, active, events = KEYS[1], KEYS[2], KEYS[3]
local id, epoch, value, n_arg = ARGV[1] or '', ARGV[2], ARGV[3] or '', ARGV[4]

if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
if #value > 1024 then
  return redis.error_reply('EMQARG progress value must be at most 1024 bytes')
end
local max_len
if events then
  max_len = string.match(n_arg or '', '^%d+$') and tonumber(n_arg)
  if not max_len or max_len < 1 or max_len > 10000000 then
    return redis.error_reply('EMQARG N must be an integer in 1..10000000')
  end
end

-- A row of the wrong type is not a lease this caller holds.
if redis.call('TYPE', row).ok ~= 'hash' then
  return 0
end
local f = redis.call('HMGET', row, 'state', 'lease_epoch', 'attempts')
if f[1] ~= 'active' or f[2] ~= epoch or not redis.call('ZSCORE', active, id) then
  return 0
end

redis.call('HSET', row, 'progress', value)
if events then
  redis.call('XADD', events, 'MAXLEN', '~', max_len, '*', 'event', 'progress', 'id', id, 'attempt', f[3] or '0',
    'progress', value)
end
return 1
