--[[ group_set: write one group's policy, or the default, and bring the
  group back to the rotation when the change lets it run (docs/protocol.md,
  "Groups"). An operator's tool and a daemon's groups: config write
  policies through it; claim reads them. A group resumed, its cap raised
  or its rate changed goes to the rotation's tail in the same step (when
  it has jobs pending), so a resume cannot fall between a claim's read and
  its write. A changed rate starts a full bucket, as emq limit does for
  the queue. A change of the default (*) wakes no group.

  KEYS[1]  emq:{q}:groups     hash  group -> policy; * -> the default
  KEYS[2]  emq:{q}:gq:<g>     zset  the group's pending ids
  KEYS[3]  emq:{q}:grp:<g>    hash  the group's state: in, its bucket
  KEYS[4]  emq:{q}:rot        list  the rotation
  KEYS[5]  emq:{q}:gwait      zset  groups due back
  ARGV[1]  group              1-128 bytes of [0-9A-Za-z_.:-], or * for the
                              default policy
  ARGV[2]  policy             name=value fields separated by single spaces:
                              weight (1..1000), max_active (1..1000000),
                              rate_max (1..1000000) with rate_window_ms
                              (1..86400000), paused (1); "" deletes the
                              group's own policy (back to the default)

  Reply:   1 written, and the group is in the rotation (or waits for its
             rate's next token)
           0 written, and it is not (paused, nothing pending, or *)
  Errors:  EMQARG group must be 1-128 bytes of [0-9A-Za-z_.:-] or *
           EMQARG KEYS[n] must be <key> (the group's, of KEYS[1]'s queue)
           EMQARG <the policy's problem> (see parse_policy)
           EMQARG the default policy * cannot be paused
           WRONGTYPE when groups, rot or gwait is of another type
]]
local WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value'
local stream = nil

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

local g, text = ARGV[1] or '', ARGV[2] or ''
if g ~= '*' and not is_group(g) then
  return redis.error_reply('EMQARG group must be 1-128 bytes of [0-9A-Za-z_.:-] or *')
end
local q = string.match(KEYS[1] or '', '^(emq:{[^}]*}:)groups$')
if not q then
  return redis.error_reply('EMQARG KEYS[1] must be emq:{q}:groups')
end
for i, key in ipairs({q .. 'gq:' .. g, q .. 'grp:' .. g, q .. 'rot', q .. 'gwait'}) do
  if KEYS[i + 1] ~= key then
    return redis.error_reply('EMQARG KEYS[' .. (i + 1) .. '] must be ' .. key)
  end
end
G = {q = q, gq = q .. 'gq:', grp = q .. 'grp:', gact = q .. 'gact:', idx = q .. 'gidx', rot = q .. 'rot',
  groups = q .. 'groups', wait = q .. 'gwait'}
local policy, problem = parse_policy(text)
if not policy then
  return redis.error_reply('EMQARG ' .. problem)
elseif g == '*' and policy.paused then
  return redis.error_reply('EMQARG the default policy * cannot be paused')
end
for _, kind in ipairs({{G.groups, 'hash'}, {G.rot, 'list'}, {G.wait, 'zset'}, {KEYS[2], 'zset'}, {KEYS[3], 'hash'}}) do
  local t = redis.call('TYPE', kind[1]).ok
  if t ~= kind[2] and t ~= 'none' then
    return redis.error_reply(WRONGTYPE)
  end
end

local before = policy_of(g)
if text == '' then
  redis.call('HDEL', G.groups, g)
else
  redis.call('HSET', G.groups, g, text)
end
if g == '*' then
  return 0
end
local after = policy_of(g)
local grp = G.grp .. g
local rate_changed = not before or not after or before.rate_max ~= after.rate_max or
  before.rate_window_ms ~= after.rate_window_ms
if rate_changed then
  redis.call('HDEL', grp, 'rate_credit', 'rate_at')
end
local where = redis.call('HGET', grp, 'in')
if where ~= 'rot' and (where ~= 'rate' or rate_changed) then
  if where == 'cap' or where == 'rate' then
    redis.call('ZREM', G.wait, g)
  end
  if where then
    redis.call('HDEL', grp, 'in')
  end
  wake(g, true)
end
where = redis.call('HGET', grp, 'in')
return (where == 'rot' or where == 'rate') and 1 or 0
