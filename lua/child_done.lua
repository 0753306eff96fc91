--[[ child_done: tell a waiting parent that one of its children finished.
  Run on the parent's queue by whoever drains the child's queue's outbox,
  then outbox_ack on the child's. Only a ref still in deps counts, so a
  repeat (a crash between the two, a child settled twice) changes nothing.
  The outcome is recorded in results (c: + result, or d: + error), then the
  parent's on_child_failure decides what a dead child does.

  KEYS[1]  emq:{q}:job:<id>      hash  the parent's row
  KEYS[2]  emq:{q}:deps:<id>     set   the refs the parent still waits for
  KEYS[3]  emq:{q}:results:<id>  hash  ref -> c:<result> or d:<error>
  KEYS[4]  emq:{q}:waiting       zset  member id, score time enqueued (ms)
  KEYS[5]  emq:{q}:pending       zset  member id, score lane
  KEYS[6]  emq:{q}:dead          zset  member id, score time of death (ms)
  KEYS[7]  emq:{q}:outbox        zset  optional: given, a parent that is
                                       itself a child and dies here is added
                                       (member id, score now), so its own
                                       parent hears of it
  KEYS[8]  emq:{q}:uniq:          optional, the uniq root (after the outbox,
                                       when given): a parent dying here (reply
                                       3) frees its unique key, only while the
                                       lock holds its id
  KEYS[9]  emq:{q}:events        stream optional, last: given, the parent's entry
                                       pending (reply 2) or dead (reply 3,
                                       with the error's first 256 bytes)
  ARGV[1]  child ref             <queue>:<id> of the child
  ARGV[2]  outcome               completed or dead
  ARGV[3]  text                  the child's result, or its error
  ARGV[4]  events                with the stream: its length, 1..10000000

  Reply:   0 the ref is not in deps (already told, or not a child of this
             parent): nothing changes; or the parent's row is gone
             (deleted by hand, or trimmed): nothing is recorded, and what
             is left of it goes (its deps and results keys, its id in
             waiting), since nothing can ever run it
           5 the parent is not waiting (it died of another child, or an
             operator moved it): the outcome is recorded and the ref leaves
             deps, nothing else
           1 recorded, the ref left deps, others are still awaited
           2 recorded, the ref left deps, it was the last: the parent is
             pending at its lane
           3 dead under fail: the ref left deps, the parent is dead with
             error "child <ref> died: <text>" (its first 4096 bytes)
           4 dead under wait: recorded, the ref stays in deps (the child,
             retried and completed, releases the parent)
  Errors:  EMQARG  when the ref or the outcome is malformed, or KEYS[1] is
                   not a row key
           EMQROW  when the parent's on_child_failure is not fail, wait or
                   ignore, or its lane not an integer in -1000..1000
                   (nothing is written)
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

local row, deps, results, waiting, pending, dead = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local outbox = KEYS[7] ~= stream and KEYS[7] ~= uniq_root and KEYS[7] or nil
local ref, outcome = ARGV[1], ARGV[2]
-- Given the stream, the text is ARGV[3] only when N follows it.
local text = (not stream or #ARGV > 3) and ARGV[3] or ''

local queue, job = string.match(ref or '', '^([A-Za-z0-9_.%-]+):(.*)$')
if not queue or #queue > 64 or string.sub(job, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQARG child ref must be <queue>:<id> with a JOB id')
end
if outcome ~= 'completed' and outcome ~= 'dead' then
  return redis.error_reply('EMQARG outcome must be completed or dead')
end
-- The parent's id is the row key's tail: the member of its sets.
local id = string.match(row, '^emq:{[^}]*}:job:(.+)$')
if not id then
  return redis.error_reply('EMQARG KEYS[1] must be a row key emq:{q}:job:<id>')
end

if redis.call('EXISTS', row) == 0 then
  redis.call('DEL', deps, results)
  redis.call('ZREM', waiting, id)
  return 0
end
if redis.call('SISMEMBER', deps, ref) == 0 then
  return 0
end

local function malformed(field, rule)
  return redis.error_reply('EMQROW ' .. row .. ' ' .. field .. ' is not ' .. rule .. '; nothing was written')
end
local f = redis.call('HMGET', row, 'state', 'on_child_failure', 'lane', 'parent', 'attempts', 'unique', 'unique_mode')
local recorded = (outcome == 'completed' and 'c:' or 'd:') .. text

if f[1] ~= 'waiting' then
  redis.call('HSET', results, ref, recorded)
  redis.call('SREM', deps, ref)
  return 5
end

local policy = f[2] or 'fail'
if policy ~= 'fail' and policy ~= 'wait' and policy ~= 'ignore' then
  return malformed('on_child_failure', 'fail, wait or ignore')
end
-- Absent is lane 0.
local lane = not f[3] and 0 or (string.match(f[3], '^-?%d+$') and tonumber(f[3]))
if not lane or lane < -1000 or lane > 1000 then
  return malformed('lane', 'an integer in -1000..1000')
end

redis.call('HSET', results, ref, recorded)
if outcome == 'dead' and policy == 'wait' then
  return 4
end
redis.call('SREM', deps, ref)

if outcome == 'dead' and policy == 'fail' then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZREM', waiting, id)
  local err = 'child ' .. ref .. ' died: ' .. text
  redis.call('HSET', row, 'state', 'dead', 'error', string.sub(err, 1, 4096))
  redis.call('ZADD', dead, now, id)
  if outbox and f[4] then
    redis.call('ZADD', outbox, now, id)
  end
  release_key(id, f[6], f[7])
  emit('dead', id, f[5] or '0', 'error', string.sub(err, 1, 256))
  return 3
end

if redis.call('SCARD', deps) > 0 then
  return 1
end
redis.call('ZREM', waiting, id)
redis.call('HSET', row, 'state', 'pending')
redis.call('ZADD', pending, lane, id)
emit('pending', id, f[5] or '0')
return 2
