--[[ cancel: remove a job that is not running.
  A pending, delayed, dead or kept completed job is deleted with its row.
  A running job is refused: its worker holds the lease.
  Given the outbox (a flow-aware speaker passes it), a child (a row with
  parent) is not deleted but moved to dead with error "cancelled" and added
  to the outbox, so its parent hears of it and an operator can still retry
  it; a completed child whose parent has not been told yet (its id still in
  the outbox) is refused, since outbox_ack removes it once its parent has
  its result. A waiting parent is refused unless cancel is given its
  waiting set, deps and results (a flow-aware speaker passes them): then
  it is removed as any job (its children go on; their news finds no
  parent), its deps and results with its row, or, a child itself given
  the outbox, moved to dead as a child is (its deps and results kept, as
  a dead parent's are). An id in waiting whose row is gone (deleted by
  hand) is removed from it with its deps and results.

  KEYS[1]  emq:{q}:job:<id>   hash  the job row
  KEYS[2]  emq:{q}:pending    zset
  KEYS[3]  emq:{q}:delayed    zset
  KEYS[4]  emq:{q}:dead       zset  member id, score time of death (ms)
  KEYS[5]  emq:{q}:outbox     zset  optional: member id, score time (ms)
  KEYS[6]  emq:{q}:waiting    zset  optional, with KEYS[7] and KEYS[8], after
                                    the outbox: member id, score time (ms)
  KEYS[7]  emq:{q}:deps:<id>  set   optional: the parent's awaited refs
  KEYS[8]  emq:{q}:results:<id> hash optional: the parent's children's outcomes
  KEYS[9]  emq:{q}:uniq:       optional, the uniq root, after whichever of
                                    the optional KEYS above are given: a job
                                    deleted, or a child sent to dead, frees
                                    its unique key, only while the lock
                                    holds its id
  KEYS[10] emq:{q}:events     stream optional, the last KEY whichever of the
                                    optional ones come before it: given,
                                    the entry removed, or dead with error
                                    "cancelled" for a child
  ARGV[1]  id                 branded job id
  ARGV[2]  events             with the stream: its length, 1..10000000

  Reply:   1 removed (row deleted; a child given the outbox: dead, with
             error cancelled, in the outbox; given waiting, an id in it
             whose row is gone: removed from it)
           0 no such job
           2 refused: it is active (its worker holds the lease), a
             waiting parent when waiting is not given, or, given the
             outbox, a completed child still in it
  Errors:  EMQKIND when the id is not JOB-namespaced
           EMQARG  when events is not an integer in 1..10000000
           WRONGTYPE when the stream is not a stream
]]
-- Events (PROTOCOL.md, "Events"): given the queue's stream as the last KEY,
-- the last ARGV is its length, and each state this call writes is appended.
local WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value'
local stream = string.match(KEYS[#KEYS], '^emq:{[^}]*}:events$') and KEYS[#KEYS]
local stream_len = stream and string.match(ARGV[#ARGV] or '', '^%d+$') and tonumber(ARGV[#ARGV])
if stream and not (stream_len and stream_len >= 1 and stream_len <= 10000000) then
  return redis.error_reply('EMQARG events must be an integer in 1..10000000')
end
-- Compared as text: a table of the two types would be built on every call.
local stream_type = stream and redis.call('TYPE', stream).ok
if stream_type and stream_type ~= 'stream' and stream_type ~= 'none' then
  return redis.error_reply(WRONGTYPE)
end
local function emit(event, id, attempt, ...)
  if stream then
    redis.call('XADD', stream, 'MAXLEN', '~', stream_len, '*', 'event', event, 'id', id, 'attempt', attempt, ...)
  end
end

-- [shared unique_root: every copy the same, tests/lua/script_copies_test.cpp]
-- Unique jobs (docs/protocol.md, "Release"): the uniq root is the KEY
-- before the stream (the last without one) when it is emq:{q}:uniq:.
-- Given it, a job leaving its key's cover frees the key, only while the
-- lock still holds its id; a window is left to expire.
local uniq_at = #KEYS - (stream and 1 or 0)
local uniq_root = string.match(KEYS[uniq_at] or '', '^emq:{[^}]*}:uniq:$') and KEYS[uniq_at]

-- The lock of a row's unique key that this call may free or take: none
-- without the root, for a key that is not well formed, or for a window.
local function lock_of(key, mode)
  if uniq_root and key and mode ~= 'window' and #key <= 128 and string.match(key, '^[0-9A-Za-z_.:%-]+$') then
    return uniq_root .. key
  end
  return nil
end
-- [end shared unique_root]

-- [shared unique_release: every copy the same, tests/lua/script_copies_test.cpp]
local function release_key(id, key, mode)
  local lock = lock_of(key, mode)
  if lock and redis.pcall('GET', lock) == id then
    redis.call('DEL', lock)
  end
end
-- [end shared unique_release]

local given = uniq_at - (uniq_root and 1 or 0)  -- KEYS before the root and the stream
local row, pending, delayed, dead = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local outbox = given >= 5 and KEYS[5] or nil
local waiting, deps, results
if given >= 8 then
  waiting, deps, results = KEYS[6], KEYS[7], KEYS[8]
end
local id = ARGV[1]

-- [shared job_id: every copy the same, tests/lua/script_copies_test.cpp]
if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
-- [end shared job_id]

local f = redis.call('HMGET', row, 'state', 'parent', 'attempts', 'unique', 'unique_mode')
local state, child = f[1], outbox and f[2]
if state == 'active' or (state == 'waiting' and not results) then
  return 2
end
if child and state == 'completed' and redis.call('ZSCORE', outbox, id) then
  return 2
end
redis.call('ZREM', pending, id)
redis.call('ZREM', delayed, id)
local was_waiting = results and redis.call('ZREM', waiting, id) == 1
if not state then
  redis.call('ZREM', dead, id)
  if results then
    redis.call('DEL', deps, results)
  end
  if was_waiting then
    emit('removed', id, '0')
  end
  return was_waiting and 1 or 0
end
if child and state ~= 'completed' then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('HSET', row, 'state', 'dead', 'error', 'cancelled')
  redis.call('ZADD', dead, now, id)
  redis.call('ZADD', outbox, now, id)
  release_key(id, f[4], f[5])
  emit('dead', id, f[3] or '0', 'error', 'cancelled')
  return 1
end
redis.call('ZREM', dead, id)
redis.call('DEL', row)
if results then
  redis.call('DEL', deps, results)
end
release_key(id, f[4], f[5])
emit('removed', id, f[3] or '0')
return 1
