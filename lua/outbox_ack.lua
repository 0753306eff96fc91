--[[ outbox_ack: the parent of a finished child has been told.
  Run on the child's queue after child_done succeeded on the parent's. The
  id leaves the outbox; a completed child's row, kept until now so that its
  result could be read, is then deleted or left to expire, as complete
  would have done. A dead child stays dead, for an operator to retry.

  KEYS[1]  emq:{q}:job:<id>   hash  the child's row
  KEYS[2]  emq:{q}:outbox     zset  member id, score time (ms)
  ARGV[1]  id                 branded job id
  ARGV[2]  keep_ms            integer 0..1000000000000; 0 deletes a
                              completed row at once
  ARGV[3]  score (optional)   integer: the id's score when the caller read
                              it; a different score now means the child
                              finished again since (retried from dead), news
                              its parent has not had, so the entry stays

  Reply:   1 the id left the outbox (a completed row deleted, or expiring
             in keep_ms)
           0 the id is not in the outbox, or not with the score given
             (nothing changes)
  Errors:  EMQKIND when the id is not JOB-namespaced
           EMQARG  when keep_ms or score is malformed
]]
local row, outbox = KEYS[1], KEYS[2]
local id, keep_arg, score_arg = ARGV[1], ARGV[2], ARGV[3]

-- [shared job_id: every copy the same, tests/lua/script_copies_test.cpp]
if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
-- [end shared job_id]
local keep_ms = string.match(keep_arg or '', '^%d+$') and tonumber(keep_arg)
if not keep_ms or keep_ms > 1000000000000 then
  return redis.error_reply('EMQARG keep_ms must be an integer in 0..1000000000000')
end

if score_arg ~= nil then
  local digits = string.match(score_arg, '^%-?(%d+)$')
  if not digits or #digits > 16 then
    return redis.error_reply('EMQARG score must be an integer of at most 16 digits')
  end
end

local score = redis.call('ZSCORE', outbox, id)
if not score or (score_arg ~= nil and tonumber(score) ~= tonumber(score_arg)) then
  return 0
end
-- A key some other writer turned into another type is not a completed row:
-- it is left alone (and HGET on it would fail).
local completed = redis.call('TYPE', row).ok == 'hash' and redis.call('HGET', row, 'state') == 'completed'
redis.call('ZREM', outbox, id)
if completed and keep_ms == 0 then
  redis.call('DEL', row)
elseif completed then
  redis.call('PEXPIRE', row, keep_ms)
end
return 1
