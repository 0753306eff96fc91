--[[ outbox_ack_many: the parents of many finished children have been told.
  outbox_ack for each id given, with the score the caller read it with, in
  one step: the drainer's form, one call per queue per round (PROTOCOL.md,
  "Flows"). Each id leaves the outbox only if it still has that score (a
  child that finished again since keeps its entry for the next round); a
  completed child's row is then deleted or left to expire, as complete
  would have done. A dead child stays dead, for an operator to retry.
  Everything is checked before anything is written.

  KEYS[1]  emq:{q}:outbox     zset  member id, score time (ms)
  KEYS[2]  emq:{q}:job:       the row root; a child's row is KEYS[2] .. id
  ARGV[1]  keep_ms            integer 0..1000000000000; 0 deletes a
                              completed row at once
  ARGV[2…] id, score          per child: its branded job id and its score
                              when the caller read it (an integer of at
                              most 16 digits); at least one

  Reply:   an array, one per id in the order given, each outbox_ack's:
           1 the id left the outbox (a completed row deleted, or expiring
             in keep_ms)
           0 the id is not in the outbox (also: it left earlier in this
             batch), or not with the score given (nothing changes)
  Errors:  EMQKIND when an id is not JOB-namespaced (named by its place)
           EMQARG  when keep_ms or a score is malformed, or the arguments
                   after keep_ms are not id, score pairs
]]
local outbox, row_root = KEYS[1], KEYS[2]

local keep_ms = string.match(ARGV[1] or '', '^%d+$') and tonumber(ARGV[1])
if not keep_ms or keep_ms > 1000000000000 then
  return redis.error_reply('EMQARG keep_ms must be an integer in 0..1000000000000')
end
if #ARGV < 3 or #ARGV % 2 ~= 1 then
  return redis.error_reply('EMQARG outbox_ack_many takes keep_ms, then id, score for each child, at least one')
end
for i = 2, #ARGV, 2 do
  if string.sub(ARGV[i], 1, 3) ~= 'JOB' then
    return redis.error_reply('EMQKIND id ' .. (i / 2) .. ' must be JOB-namespaced')
  end
  local digits = string.match(ARGV[i + 1], '^%-?(%d+)$')
  if not digits or #digits > 16 then
    return redis.error_reply('EMQARG score ' .. (i / 2) .. ' must be an integer of at most 16 digits')
  end
end

local replies = {}
for i = 2, #ARGV, 2 do
  local id = ARGV[i]
  local score = redis.call('ZSCORE', outbox, id)
  if not score or tonumber(score) ~= tonumber(ARGV[i + 1]) then
    replies[#replies + 1] = 0
  else
    local row = row_root .. id
    -- A key some other writer turned into another type is not a completed
    -- row: it is left alone (and HGET on it would fail).
    local completed = redis.call('TYPE', row).ok == 'hash' and redis.call('HGET', row, 'state') == 'completed'
    redis.call('ZREM', outbox, id)
    if completed and keep_ms == 0 then
      redis.call('DEL', row)
    elseif completed then
      redis.call('PEXPIRE', row, keep_ms)
    end
    replies[#replies + 1] = 1
  end
end
return replies
