--[[ promote_job: run one delayed job now, for an operator's "run it now".
  The id leaves the delayed set for pending at its lane and the row's state
  becomes pending; attempts, failures and the last error stay, since the
  job is the same run that was waiting (a retry's backoff, or a due time a
  producer set). A job that is not in the delayed set is left alone,
  whatever its state. A delayed id whose row is gone is dropped from
  delayed (there is nothing to run); one whose row is not a hash is named
  in the server's log and left in place for an operator. One whose lane is
  not an integer in -1000..1000 is refused (EMQROW), nothing written.

  KEYS[1]  emq:{q}:job:<id>   hash  the job row
  KEYS[2]  emq:{q}:delayed    zset  member id, score due time (ms)
  KEYS[3]  emq:{q}:pending    zset  member id, score lane
  KEYS[4]  emq:{q}:gq:        optional, the group block (docs/protocol.md,
                                    "Groups"), seven KEYS known by the
                                    first, the group root (a group's
                                    pending ids: KEYS[4] .. group):
                                    a grouped job goes to its group, not
                                    pending
  KEYS[5]  emq:{q}:grp:       optional, the block: a group's state root
  KEYS[6]  emq:{q}:gact:      optional, the block: a group's count root
  KEYS[7]  emq:{q}:gidx       optional, the block: the pending counts
  KEYS[8]  emq:{q}:rot        optional, the block: the rotation
  KEYS[9]  emq:{q}:groups     optional, the block: the policies
  KEYS[10] emq:{q}:gwait      optional, the block: groups due back
  KEYS[11] emq:{q}:events     stream optional: given, the entry pending
  ARGV[1]  id                 branded job id
  ARGV[2]  events             with the stream: its length, 1..10000000

  Reply:   1 moved from delayed to pending
           0 not in the delayed set (nothing changes)
  Errors:  EMQKIND when the id is not JOB-namespaced
           EMQROW  when the row's lane is malformed
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

-- from: the set the job leaves (delayed here, dead in retry_job.lua).
-- [shared move_keys: every copy the same, tests/lua/script_copies_test.cpp]
local row, from, pending = KEYS[1], KEYS[2], KEYS[3]
local id = ARGV[1] or ''

-- A set this call adds to must be a zset (or absent) before the first
-- write: ZADD failing after it would leave the job in no set.
local function is_zset(key)
  local kind = redis.call('TYPE', key).ok
  return kind == 'zset' or kind == 'none'
end

-- The row's lane: absent is 0; nil when it is not an integer in -1000..1000.
local function lane_of(v)
  local n = not v and 0 or (string.match(v, '^-?%d+$') and tonumber(v))
  return n and n >= -1000 and n <= 1000 and n or nil
end
-- [end shared move_keys]

-- [shared job_id: every copy the same, tests/lua/script_copies_test.cpp]
if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
-- [end shared job_id]

-- [shared move_row: every copy the same, tests/lua/script_copies_test.cpp]
if not redis.call('ZSCORE', from, id) then
  return 0
end
-- Scripts are not rolled back: HSET on a row some other writer made a
-- string would fail after the ZREM. So the row is checked before any write.
local kind = redis.call('TYPE', row).ok
if kind == 'none' then
  redis.call('ZREM', from, id)
  return 0
end
-- [end shared move_row]
if kind ~= 'hash' then
  redis.log(redis.LOG_WARNING, 'emq promote_job: ' .. row .. ' is not an emq/1 row (a hash); left in ' .. from ..
    ' for an operator')
  return 0
end

local f = redis.call('HMGET', row, 'lane', 'attempts', 'group')
local lane = lane_of(f[1])
local group = group_of(f[3])
-- [shared move_lane: every copy the same, tests/lua/script_copies_test.cpp]
if not lane then
  return redis.error_reply('EMQROW ' .. row .. ' lane is not an integer in -1000..1000; nothing was written')
end

if not is_zset(pending) then
  return redis.error_reply(WRONGTYPE)
end
-- [end shared move_lane]

redis.call('ZREM', from, id)
redis.call('HSET', row, 'state', 'pending')
if group then
  to_group(group, id, lane)
else
  redis.call('ZADD', pending, lane, id)
end
emit('pending', id, f[2] or '0')
return 1
