--[[ children_done: tell a parent that several of its children finished.
  child_done for each child given, in order, in one step: the drainer's
  form, one call per parent per round however many of its children
  finished (PROTOCOL.md, "Flows"). Each child gets child_done's reply. A
  parent sent to dead here is counted in stats dead, as every other death
  is. Everything is checked before anything is written, so an error leaves
  the parent as it was.

  KEYS[1]  emq:{q}:job:<id>      hash  the parent's row
  KEYS[2]  emq:{q}:deps:<id>     set   the refs the parent still waits for
  KEYS[3]  emq:{q}:results:<id>  hash  ref -> c:<result> or d:<error>
  KEYS[4]  emq:{q}:waiting       zset  member id, score time enqueued (ms)
  KEYS[5]  emq:{q}:pending       zset  member id, score lane
  KEYS[6]  emq:{q}:dead          zset  member id, score time of death (ms)
  KEYS[7]  emq:{q}:stats         hash  counters: dead
  KEYS[8]  emq:{q}:outbox        zset  optional: given, a parent that is
                                       itself a child and dies here is added
                                       (member id, score now), so its own
                                       parent hears of it
  KEYS[9]  emq:{q}:uniq:          optional, the uniq root (after the outbox,
                                       when given): a parent dying here (reply
                                       3) frees its unique key, only while the
                                       lock holds its id
  KEYS[10] emq:{q}:events        stream optional, last: given, the parent's entry
                                       pending (reply 2) or dead (reply 3,
                                       with the error's first 256 bytes)
  ARGV     per child, three: ref (<queue>:<id>), outcome (completed or
           dead), text (its result or its error); at least one child
  ARGV[n]  events                with the stream, last: its length,
                                 1..10000000

  Reply:   an array, one per child in the order given, each child_done's:
           0 the ref is not in deps (already told, also earlier in this
             batch, or not a child of this parent): nothing changes; or,
             for every child, the parent's row is gone: as child_done,
             nothing is recorded and its deps, results and waiting entry go
           5 the parent is not waiting (it died of another child, also
             earlier in this batch, or an operator moved it): the outcome
             is recorded and the ref leaves deps, nothing else
           1 recorded, the ref left deps, others are still awaited
           2 recorded, the ref left deps, it was the last: the parent is
             pending at its lane
           3 dead under fail: the ref left deps, the parent is dead with
             error "child <ref> died: <text>" (its first 4096 bytes), and
             stats dead + 1
           4 dead under wait: recorded, the ref stays in deps (the child,
             retried and completed, releases the parent)
  Errors:  EMQARG  when the arguments are not ref, outcome, text triples, a
                   ref or an outcome is malformed (named by its place), or
                   the first KEY is not a row key
           EMQROW  when a child would be applied to a waiting parent whose
                   on_child_failure is not fail, wait or ignore, or whose
                   lane is not an integer in -1000..1000 (nothing is written)
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

local row, deps, results, waiting, pending, dead, stats = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6],
  KEYS[7]
local outbox = KEYS[8] ~= stream and KEYS[8] ~= uniq_root and KEYS[8] or nil
-- The triples end before the stream's length, when it is given.
local last = stream and #ARGV - 1 or #ARGV

if last == 0 or last % 3 ~= 0 then
  return redis.error_reply('EMQARG children_done takes ref, outcome, text for each child, at least one')
end
for i = 1, last, 3 do
  local n = (i + 2) / 3
  local queue, job = string.match(ARGV[i], '^([A-Za-z0-9_.%-]+):(.*)$')
  if not queue or #queue > 64 or string.sub(job, 1, 3) ~= 'JOB' then
    return redis.error_reply('EMQARG child ' .. n .. ': ref must be <queue>:<id> with a JOB id')
  end
  if ARGV[i + 1] ~= 'completed' and ARGV[i + 1] ~= 'dead' then
    return redis.error_reply('EMQARG child ' .. n .. ': outcome must be completed or dead')
  end
end
-- The parent's id is the row key's tail: the member of its sets.
local id = string.match(row, '^emq:{[^}]*}:job:(.+)$')
if not id then
  return redis.error_reply('EMQARG KEYS[1] must be a row key emq:{q}:job:<id>')
end

if redis.call('EXISTS', row) == 0 then
  redis.call('DEL', deps, results)
  redis.call('ZREM', waiting, id)
  local none = {}
  for _ = 1, last, 3 do
    none[#none + 1] = 0
  end
  return none
end

local f = redis.call('HMGET', row, 'state', 'on_child_failure', 'lane', 'parent', 'attempts', 'unique', 'unique_mode')
local state = f[1]
local policy = f[2] or 'fail'
-- Absent is lane 0.
local lane = not f[3] and 0 or (string.match(f[3], '^-?%d+$') and tonumber(f[3]))

-- As child_done would refuse at the first child it applies to a waiting
-- parent: here before any child is applied, so nothing is written.
if state == 'waiting' then
  local applies = false
  for i = 1, last, 3 do
    if redis.call('SISMEMBER', deps, ARGV[i]) == 1 then
      applies = true
      break
    end
  end
  local function malformed(field, rule)
    return redis.error_reply('EMQROW ' .. row .. ' ' .. field .. ' is not ' .. rule .. '; nothing was written')
  end
  if applies and policy ~= 'fail' and policy ~= 'wait' and policy ~= 'ignore' then
    return malformed('on_child_failure', 'fail, wait or ignore')
  end
  if applies and (not lane or lane < -1000 or lane > 1000) then
    return malformed('lane', 'an integer in -1000..1000')
  end
end

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- deps only shrinks here, so its size is counted once and kept by hand.
local left = redis.call('SCARD', deps)
local replies = {}
for i = 1, last, 3 do
  local ref, outcome, text = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local reply
  if redis.call('SISMEMBER', deps, ref) == 0 then
    reply = 0
  else
    redis.call('HSET', results, ref, (outcome == 'completed' and 'c:' or 'd:') .. text)
    if state == 'waiting' and outcome == 'dead' and policy == 'wait' then
      reply = 4
    else
      redis.call('SREM', deps, ref)
      left = left - 1
      if state ~= 'waiting' then
        reply = 5
      elseif outcome == 'dead' and policy == 'fail' then
        local now = now_ms()
        redis.call('ZREM', waiting, id)
        local err = 'child ' .. ref .. ' died: ' .. text
        redis.call('HSET', row, 'state', 'dead', 'error', string.sub(err, 1, 4096))
        redis.call('ZADD', dead, now, id)
        redis.call('HINCRBY', stats, 'dead', 1)
        if outbox and f[4] then
          redis.call('ZADD', outbox, now, id)
        end
        release_key(id, f[6], f[7])
        emit('dead', id, f[5] or '0', 'error', string.sub(err, 1, 256))
        state = 'dead'
        reply = 3
      elseif left > 0 then
        reply = 1
      else
        redis.call('ZREM', waiting, id)
        redis.call('HSET', row, 'state', 'pending')
        redis.call('ZADD', pending, lane, id)
        emit('pending', id, f[5] or '0')
        state = 'pending'
        reply = 2
      end
    end
  end
  replies[#replies + 1] = reply
end
return replies
