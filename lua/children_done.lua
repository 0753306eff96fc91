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
  KEYS[9]  emq:{q}:gq:        optional, the group block (docs/protocol.md,
                                    "Groups"), seven KEYS known by the
                                    first, the group root (a group's
                                    pending ids: KEYS[9] .. group):
                                    (after the outbox, when given): a
                                    parent released here (reply 2) goes
                                    to its group, not pending
  KEYS[10] emq:{q}:grp:       optional, the block: a group's state root
  KEYS[11] emq:{q}:gact:      optional, the block: a group's count root
  KEYS[12] emq:{q}:gidx       optional, the block: the pending counts
  KEYS[13] emq:{q}:rot        optional, the block: the rotation
  KEYS[14] emq:{q}:groups     optional, the block: the policies
  KEYS[15] emq:{q}:gwait      optional, the block: groups due back
  KEYS[16] emq:{q}:uniq:          optional, the uniq root (after the outbox
                                       and the block, when given): a parent
                                       dying here (reply 3) frees its unique
                                       key, only while the lock holds its id
  KEYS[17] emq:{q}:events        stream optional, last: given, the parent's entry
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

-- [shared group_block: every copy the same, tests/lua/script_copies_test.cpp]
-- The length read len of key: its integer (0 when there is no key), or
-- false when the key is of another type; any other refusal (the ACL's) is
-- raised as it came. A type check at less cost than TYPE, whose status
-- reply becomes a table (0 is true in Lua: only false fails a check).
local function length_of(len, key)
  local r = redis.pcall(len, key)
  if type(r) ~= 'table' then
    return r
  elseif string.sub(r.err, 1, 10) == 'WRONGTYPE ' then
    return false
  end
  error(r, 0)
end

-- Groups (docs/protocol.md, "Groups"): given the group block, seven KEYS
-- before the uniq root and the stream whose first is emq:{q}:gq:, a
-- grouped job moves through its group (its zset, its count, the
-- rotation). Without it, a grouped job moves as any other.
local G
local own_keys = #KEYS - (stream and 1 or 0)
if string.match(KEYS[own_keys] or '', '^emq:{[^}]*}:uniq:$') then
  own_keys = own_keys - 1
end
if own_keys > 7 and string.match(KEYS[own_keys - 6], '^emq:{[^}]*}:gq:$') then
  local q = string.match(KEYS[1], '^emq:{[^}]*}:') or ''
  for i, name in ipairs({'gq:', 'grp:', 'gact:', 'gidx', 'rot', 'groups', 'gwait'}) do
    if KEYS[own_keys - 7 + i] ~= q .. name then
      return redis.error_reply('EMQARG KEYS[' .. (own_keys - 7 + i) .. '] must be ' .. q .. name)
    end
  end
  own_keys = own_keys - 7
  G = {q = q, gq = q .. 'gq:', grp = q .. 'grp:', gact = q .. 'gact:', idx = q .. 'gidx', rot = q .. 'rot',
    groups = q .. 'groups', wait = q .. 'gwait'}
  if not (length_of('LLEN', G.rot) and length_of('ZCARD', G.idx) and length_of('ZCARD', G.wait) and
      length_of('HLEN', G.groups)) then
    return redis.error_reply(WRONGTYPE)
  end
end

local group_now_cache
local function group_now()
  if not group_now_cache then
    local t = redis.call('TIME')
    group_now_cache = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return group_now_cache
end
-- [end shared group_block]

-- [shared group_policy: every copy the same, tests/lua/script_copies_test.cpp]
-- A group's policy: name=value fields separated by single spaces; nil and
-- what is wrong when it is not one.
local POLICY_RANGES = {weight = {1, 1000, '1..1000'}, max_active = {1, 1000000, '1..1000000'},
  rate_max = {1, 1000000, '1..1000000'}, rate_window_ms = {1, 86400000, '1..86400000'}}
local function parse_policy(text)
  local p = {}
  for field in string.gmatch(text == '' and '' or text .. ' ', '(.-) ') do
    local name, value = string.match(field, '^([^=]+)=(.*)$')
    if not name then
      return nil, 'policy must be name=value fields separated by spaces'
    end
    local range = POLICY_RANGES[name]
    if name ~= 'paused' and not range then
      return nil, 'unknown policy field ' .. string.sub(name, 1, 64)
    elseif p[name] ~= nil then
      return nil, 'policy field ' .. name .. ' is given twice'
    elseif name == 'paused' then
      if value ~= '1' then
        return nil, 'paused must be 1'
      end
      p.paused = true
    else
      local n = #value <= 18 and (value == '0' or string.match(value, '^-?[1-9]%d*$')) and tonumber(value)
      if not n or n < range[1] or n > range[2] then
        return nil, name .. ' must be an integer in ' .. range[3]
      end
      p[name] = n
    end
  end
  if p.rate_max and not p.rate_window_ms then
    return nil, 'rate_max must be set with rate_window_ms'
  elseif p.rate_window_ms and not p.rate_max then
    return nil, 'rate_window_ms must be set with rate_max'
  end
  p.weight = p.weight or 1
  return p
end

-- g's policy (its own, else the default, else all defaults); nil when broken.
local function policy_of(g)
  local t = redis.call('HMGET', G.groups, g, '*')
  return (parse_policy(t[1] or t[2] or ''))
end
-- [end shared group_policy]

-- [shared group_steps: every copy the same, tests/lua/script_copies_test.cpp]
local function is_group(g)
  return type(g) == 'string' and #g <= 128 and string.match(g, '^[0-9A-Za-z_.:%-]+$') ~= nil
end

-- The row's group when the block is given, it is well formed and its keys
-- have their types; nil otherwise (a group whose keys do not is named in
-- the log, and its job moves as an ungrouped one).
local function group_of(g)
  if not G or not is_group(g) then
    return nil
  end
  local a, b, c = length_of('ZCARD', G.gq .. g), length_of('HLEN', G.grp .. g), length_of('ZCARD', G.gact .. g)
  if a and b and c then
    return g
  end
  redis.log(redis.LOG_WARNING, 'emq: group ' .. g .. ' of ' .. G.q .. ' has a key of another type; ' ..
    'its job moved as an ungrouped one, the keys left for an operator')
  return nil
end

-- Up to 10 counted ids whose recorded deadline has passed, against their
-- rows: one still running in g keeps its count at its deadline in active,
-- any other leaves it (a count an emq/1 peer left too high heals here).
local function check_count(g)
  local gact = G.gact .. g
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', gact, '-inf', group_now(), 'LIMIT', 0, 10)) do
    local row = G.q .. 'job:' .. id
    local f = redis.call('TYPE', row).ok == 'hash' and redis.call('HMGET', row, 'state', 'group')
    local score = f and f[1] == 'active' and f[2] == g and redis.pcall('ZSCORE', G.q .. 'active', id)
    if type(score) == 'string' then
      redis.call('ZADD', gact, score, id)
    else
      redis.call('ZREM', gact, id)
    end
  end
end

-- g back at the rotation's tail when it may run: something pending, not
-- paused, its policy well formed, and not there or waiting for tokens
-- already (nor for its cap, unless a job of it just stopped counting).
-- Not woken, also where it is (its in field, false when absent): tidy
-- needs it next, and nothing wrote it since.
local function wake(g, after_end)
  local grp = G.grp .. g
  local where = redis.call('HGET', grp, 'in')
  if where == 'rot' or where == 'rate' or (where == 'cap' and not after_end) then
    return false, where
  end
  if redis.call('ZCARD', G.gq .. g) == 0 then
    return false, where
  end
  local p = policy_of(g)
  if not p or p.paused then
    return false, where
  end
  if where == 'cap' then
    redis.call('ZREM', G.wait, g)
  end
  redis.call('RPUSH', G.rot, g)
  redis.call('HSET', grp, 'in', 'rot')
  redis.call('PERSIST', grp)
  return true
end

-- An idle group's keys go: nothing pending, nothing counted (once the
-- count is checked), not in the rotation. A rated group's bucket stays
-- one window, after which it would be full anyway. where: g's in field
-- when the caller has just read it (false: absent); nil, it is read.
local function tidy(g, where)
  local grp = G.grp .. g
  if where == nil then
    where = redis.call('HGET', grp, 'in')
  end
  if where == 'rot' or redis.call('EXISTS', G.gq .. g) == 1 then
    return
  end
  if redis.call('EXISTS', G.gact .. g) == 1 then
    check_count(g)
    if redis.call('EXISTS', G.gact .. g) == 1 then
      return
    end
  end
  if where == 'cap' or where == 'rate' then
    redis.call('ZREM', G.wait, g)
  end
  redis.call('ZREM', G.idx, g)
  local p = policy_of(g)
  if p and p.rate_max and redis.call('HEXISTS', grp, 'rate_at') == 1 then
    redis.call('HDEL', grp, 'in', 'deficit')
    redis.call('PEXPIRE', grp, p.rate_window_ms)
  else
    redis.call('DEL', grp)
  end
end

-- A job of g becomes pending: into g's zset, out of its count.
local function to_group(g, id, lane)
  local added = redis.call('ZADD', G.gq .. g, lane, id)
  local left = redis.call('ZREM', G.gact .. g, id)
  if added == 1 then
    redis.call('ZINCRBY', G.idx, 1, g)
    redis.call('ZINCRBY', G.idx, 1, '*')
  end
  wake(g, left == 1)
end

-- A counted job of g stops holding its lease and is not pending.
local function out_of_group(g, id)
  local where
  if redis.call('ZREM', G.gact .. g, id) == 1 then
    local woke
    woke, where = wake(g, true)
    if woke then
      return  -- in the rotation: tidy would leave it
    end
  end
  tidy(g, where)
end

-- n of g's pending ids left its zset: its count and the sum go down.
local function uncount_pending(g, n)
  redis.call('ZINCRBY', G.idx, -n, g)
  if tonumber(redis.call('ZINCRBY', G.idx, -n, '*')) <= 0 then
    redis.call('ZREM', G.idx, '*')
  end
end
-- [end shared group_steps]

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
local outbox = own_keys >= 8 and KEYS[8] or nil
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

local f = redis.call('HMGET', row, 'state', 'on_child_failure', 'lane', 'parent', 'attempts', 'unique', 'unique_mode',
  'group')
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
        local group = group_of(f[8])
        redis.call('ZREM', waiting, id)
        redis.call('HSET', row, 'state', 'pending')
        if group then
          to_group(group, id, lane)
        else
          redis.call('ZADD', pending, lane, id)
        end
        emit('pending', id, f[5] or '0')
        state = 'pending'
        reply = 2
      end
    end
  end
  replies[#replies + 1] = reply
end
return replies
