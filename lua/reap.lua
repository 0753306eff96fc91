--[[ reap: recover jobs whose lease deadline has passed.
  Their worker died or lost the server. Each counts a failure with error
  "lease expired", then goes dead when its attempts have reached
  max_attempts, else back to pending at its lane. Any number of speakers
  may reap the same queue at once: each id moves once, inside this script.
  Rows that are gone are dropped from active; so are keys that are not
  hashes, which are also named in the server's log and left in place for
  an operator. A row that is a hash whose attempts or failures is not an
  integer goes to dead (score now, state dead, error "row field <field>
  is not an integer", nothing else written), so that no job is ever in no
  set. A row whose lane is not an integer in -1000..1000 stays in active,
  named in the log, for an operator. The stats counters reaped and dead count the
  jobs moved; a broken one is left as it is and named in the log, checked
  before anything is written.

  KEYS[1]  emq:{q}:active     zset  member id, score lease deadline (ms)
  KEYS[2]  emq:{q}:pending    zset  member id, score lane
  KEYS[3]  emq:{q}:dead       zset  member id, score time of death (ms)
  KEYS[4]  emq:{q}:stats      hash  counters reaped, dead
  KEYS[5]  emq:{q}:job:       the row root; a row is KEYS[5] .. id
  KEYS[6]  emq:{q}:outbox     zset  optional (flow-aware speakers pass it): a
                                    child (a row with parent) sent to dead is
                                    added, member id, score now
  KEYS[7]  emq:{q}:gq:        optional, the group block (docs/protocol.md,
                                    "Groups"), seven KEYS known by the
                                    first, the group root (a group's
                                    pending ids: KEYS[7] .. group):
                                    a grouped job requeued goes back to its
                                    group; dead, it leaves its group's count
  KEYS[8]  emq:{q}:grp:       optional, the block: a group's state root
  KEYS[9]  emq:{q}:gact:      optional, the block: a group's count root
  KEYS[10] emq:{q}:gidx       optional, the block: the pending counts
  KEYS[11] emq:{q}:rot        optional, the block: the rotation
  KEYS[12] emq:{q}:groups     optional, the block: the policies
  KEYS[13] emq:{q}:gwait      optional, the block: groups due back
  KEYS[14] emq:{q}:uniq:       optional, the uniq root (after the outbox
                                    and the block, when given): a job sent
                                    to dead frees its unique key, only while
                                    the lock holds its id
  KEYS[15] emq:{q}:events     stream optional, last: given, the entry
                                    pending or dead of each job moved,
                                    error "lease expired"
  ARGV[1]  max_attempts       integer 1..1000000
  ARGV[2]  limit              integer 1..1000000, ids to look at at most
  ARGV[3]  events             with the stream: its length, 1..10000000

  Reply:   [requeued, dead] counts
  Errors:  EMQARG when an argument is not an integer in range
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

local active, pending, dead, stats, row_root = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local outbox = own_keys >= 6 and KEYS[6] or nil

-- A set this call adds to must be a zset (or absent) before the first
-- write: ZADD failing after it would leave the job in no set.
local function is_zset(key)
  local kind = redis.call('TYPE', key).ok
  return kind == 'zset' or kind == 'none'
end

-- A counter as HINCRBY takes it (the server's integer form), in 18 digits
-- so that no count of ours can overflow it.
local function is_counter(v)
  return #v <= 18 and (v == '0' or string.match(v, '^-?[1-9]%d*$') ~= nil)
end

local function is_counter_of(hash, field)
  local kind = redis.call('TYPE', hash).ok
  if kind == 'none' then
    return true
  end
  if kind ~= 'hash' then
    return false
  end
  local v = redis.call('HGET', hash, field)
  return not v or is_counter(v)
end

-- The row's lane: absent is 0; nil when it is not an integer in -1000..1000.
local function lane_of(v)
  local n = not v and 0 or (string.match(v, '^-?%d+$') and tonumber(v))
  return n and n >= -1000 and n <= 1000 and n or nil
end

local function warn(text)
  redis.log(redis.LOG_WARNING, 'emq reap: ' .. text)
end

local max_attempts = string.match(ARGV[1] or '', '^%d+$') and tonumber(ARGV[1])
if not max_attempts or max_attempts < 1 or max_attempts > 1000000 then
  return redis.error_reply('EMQARG max_attempts must be an integer in 1..1000000')
end
local limit = string.match(ARGV[2] or '', '^%d+$') and tonumber(ARGV[2])
if not limit or limit < 1 or limit > 1000000 then
  return redis.error_reply('EMQARG limit must be an integer in 1..1000000')
end

if not is_zset(pending) or not is_zset(dead) or (outbox and not is_zset(outbox)) then
  return redis.error_reply(WRONGTYPE)
end

local now = group_now()
local expired = redis.call('ZRANGEBYSCORE', active, '-inf', '(' .. now, 'LIMIT', 0, limit)
local counts_reaped, counts_dead = is_counter_of(stats, 'reaped'), is_counter_of(stats, 'dead')
local requeued, died = 0, 0
-- Scripts are not rolled back: an error half-way (HINCRBY on a row some
-- other writer broke) would leave the ids after it unreaped, so each row is
-- checked before anything is written for it.
for _, id in ipairs(expired) do
  local row = row_root .. id
  local kind = redis.call('TYPE', row).ok
  local f = kind == 'hash' and redis.call('HMGET', row, 'attempts', 'failures', 'lane', 'parent', 'unique',
    'unique_mode', 'group') or {}
  local group = kind == 'hash' and group_of(f[7])
  local lane = lane_of(f[3])
  local fault = (f[1] and not is_counter(f[1]) and 'attempts') or (f[2] and not is_counter(f[2]) and 'failures')
  if kind == 'none' then
    redis.call('ZREM', active, id)
  elseif kind ~= 'hash' then
    redis.call('ZREM', active, id)
    warn(row .. ' is not a hash, so not an emq/1 row; dropped from ' .. active .. ', left in place for an operator')
  elseif fault then
    local why = 'row field ' .. fault .. ' is not an integer'
    redis.call('ZREM', active, id)
    redis.call('HSET', row, 'state', 'dead', 'error', why)
    redis.call('ZADD', dead, now, id)
    if group then
      out_of_group(group, id)
    end
    emit('dead', id, fault == 'attempts' and '0' or f[1] or '0', 'error', why)
    warn(row .. ' field ' .. fault .. ' is not an integer; sent to ' .. dead .. ' for an operator')
  elseif not lane then
    warn(row .. ' lane is not an integer in -1000..1000; left in ' .. active .. ' for an operator')
  else
    redis.call('ZREM', active, id)
    redis.call('HINCRBY', row, 'failures', 1)
    redis.call('HSET', row, 'error', 'lease expired')
    if tonumber(f[1] or '0') >= max_attempts then
      redis.call('HSET', row, 'state', 'dead')
      redis.call('ZADD', dead, now, id)
      if outbox and f[4] then
        redis.call('ZADD', outbox, now, id)
      end
      if group then
        out_of_group(group, id)
      end
      release_key(id, f[5], f[6])
      emit('dead', id, f[1] or '0', 'error', 'lease expired')
      died = died + 1
    else
      redis.call('HSET', row, 'state', 'pending')
      if group then
        to_group(group, id, lane)
      else
        redis.call('ZADD', pending, lane, id)
      end
      emit('pending', id, f[1] or '0', 'error', 'lease expired')
      requeued = requeued + 1
    end
  end
end

local function count(counted, field, n)
  if n > 0 and counted then
    redis.call('HINCRBY', stats, field, n)
  elseif n > 0 then
    warn(stats .. ' ' .. field .. ' is not an integer counter; ' .. n .. ' not counted, the field left in place ' ..
      'for an operator')
  end
end
count(counts_reaped, 'reaped', requeued + died)
count(counts_dead, 'dead', died)
return {requeued, died}
