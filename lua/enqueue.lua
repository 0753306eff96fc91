--[[ enqueue: admit a job, at lane 0 or as its named options say.
  With only id and payload it is the seed's transition, behaviour for
  behaviour: the JOB kind gate, the duplicate no-op, the three-field row,
  the pending entry. After the payload it takes named options, name value
  pairs in any order (docs/protocol.md, "The optioned enqueue"): lane,
  due_ms (the job waits in delayed), unique with unique_mode and
  unique_for_ms (one live job per key: the lock is a pointer, the verdict
  is read from the holder's row), traceparent and tracestate, and group
  (the job's group: a pending grouped job waits in its group's zset, not
  in pending; docs/protocol.md, "Groups"). The KEYS follow in a fixed
  order, each only when its option is given, so positions shift: delayed
  with due_ms, then the lock with unique, then the group's six with
  group, then the stream.

  KEYS[1]  emq:{q}:job:<id>   hash  the job row
  KEYS[2]  emq:{q}:pending    zset  member id, score lane
  KEYS[3]  emq:{q}:delayed    zset  optional, given exactly with due_ms:
                                    member id, score due time (ms)
  KEYS[4]  emq:{q}:uniq:<k>   string optional, given exactly with unique
                                    (KEYS[3] without due_ms): the lock, the
                                    id of the job holding key k
  KEYS[5]  emq:{q}:gq:<g>      zset optional, given exactly with group:
                                    g's pending ids, score lane
  KEYS[6]  emq:{q}:grp:<g>     hash  optional, with group: g's state (in)
  KEYS[7]  emq:{q}:gact:<g>    zset  optional, with group: g's count
  KEYS[8]  emq:{q}:gidx        zset  optional, with group: pending counts
  KEYS[9]  emq:{q}:rot         list  optional, with group: the rotation
  KEYS[10] emq:{q}:groups      hash  optional, with group: the policies
  KEYS[11] emq:{q}:events     stream optional, last: given, the entry
                                    pending (or delayed)
  ARGV[1]  id                 branded job id, JOB_...
  ARGV[2]  payload            opaque bytes
  ARGV[3]… options            name value pairs: lane (-1000..1000), due_ms
                              (0..10^15, server ms), unique (1-128 bytes of
                              [0-9A-Za-z_.:-]), unique_mode (finished,
                              started, window, replace), unique_for_ms
                              (1..10^12), traceparent (55 bytes),
                              tracestate (at most 512 bytes), group (1-128
                              bytes of [0-9A-Za-z_.:-])
  ARGV[n]  events             with the stream, last: its length, 1..10000000

  Reply:   1 enqueued (with unique: the job holds the key)
           0 duplicate, without unique (the row exists, whatever its
             state; nothing changes)
           [0, holder id, holder state] duplicate, with unique: the row
             exists (it is its own holder), or the key is held; nothing
             changes but the stats counter duplicates
           [2, holder id, holder state] replaced, unique_mode replace: the
             holder is pending or delayed; its payload (and, given due_ms,
             a delayed holder's due time) replaced, stats replaced + 1
  Errors:  EMQKIND when the id is not JOB-namespaced
           EMQARG  when an option is unknown, given twice or malformed,
                   when options do not go together, when the KEYS are not
                   the ones the options need, or the lock is not
                   emq:{q}:uniq:<unique> of the row's queue
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

local row, pending = KEYS[1], KEYS[2]
local id, payload = ARGV[1], ARGV[2]
-- The options end before the stream's length, when it is given.
local last = stream and #ARGV - 1 or #ARGV

if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
-- emq/1's enqueue, id and payload alone: the seed's steps and nothing
-- more, taken before the options' helpers are so much as defined, so the
-- plain enqueue pays nothing for them.
if last <= 2 and #KEYS == (stream and 3 or 2) then
  if redis.call('EXISTS', row) == 1 then
    return 0
  end
  redis.call('HSET', row, 'state', 'pending', 'attempts', '0', 'payload', payload)
  redis.call('ZADD', pending, 0, id)
  emit('pending', id, '0')
  return 1
end

-- [shared enqueue_options: every copy the same, tests/lua/script_copies_test.cpp]
-- One named option's value, as docs/protocol.md's table gives it: the
-- value to use, or nil and the refusal's text.
local function option_value(name, v)
  if name == 'lane' then
    local n = string.match(v, '^-?%d+$') and tonumber(v)
    if n and n >= -1000 and n <= 1000 then
      return n
    end
    return nil, 'lane must be an integer in -1000..1000'
  elseif name == 'due_ms' then
    local n = string.match(v, '^%d+$') and tonumber(v)
    if n and n <= 1000000000000000 then
      return n
    end
    return nil, 'due_ms must be an integer in 0..1000000000000000 (epoch ms)'
  elseif name == 'unique' then
    if #v <= 128 and string.match(v, '^[0-9A-Za-z_.:%-]+$') then
      return v
    end
    return nil, 'unique must be 1-128 bytes of [0-9A-Za-z_.:-]'
  elseif name == 'unique_mode' then
    if v == 'finished' or v == 'started' or v == 'window' or v == 'replace' then
      return v
    end
    return nil, 'unique_mode must be finished, started, window or replace'
  elseif name == 'unique_for_ms' then
    local n = string.match(v, '^%d+$') and tonumber(v)
    if n and n >= 1 and n <= 1000000000000 then
      return n
    end
    return nil, 'unique_for_ms must be an integer in 1..1000000000000'
  elseif name == 'traceparent' then
    if #v == 55 then
      return v
    end
    return nil, 'traceparent must be exactly 55 bytes'
  elseif name == 'tracestate' then
    if #v <= 512 then
      return v
    end
    return nil, 'tracestate must be at most 512 bytes'
  elseif name == 'group' then
    if #v <= 128 and string.match(v, '^[0-9A-Za-z_.:%-]+$') then
      return v
    end
    return nil, 'group must be 1-128 bytes of [0-9A-Za-z_.:-]'
  end
  return nil, 'unknown enqueue option ' .. string.sub(name, 1, 64)
end

-- The named options ARGV[first..last] (docs/protocol.md, "The optioned
-- enqueue"), checked in the order given, then together; lane and due_ms
-- only where this transition (who) takes them (with_lane_and_due). nil and
-- the refusal's text when one is wrong. Names are compared, not looked up
-- in tables built per call: the enqueue is the hottest call there is.
local function options_of(first, last, with_lane_and_due, who)
  if (last - first + 1) % 2 ~= 0 then
    return nil, 'enqueue options must be name value pairs'
  end
  local o = {}
  for i = first, last, 2 do
    local name = ARGV[i]
    local positional = name == 'lane' or name == 'due_ms'
    if not (positional or name == 'unique' or name == 'unique_mode' or name == 'unique_for_ms' or
        name == 'traceparent' or name == 'tracestate' or name == 'group') then
      return nil, 'unknown enqueue option ' .. string.sub(name, 1, 64)
    elseif positional and not with_lane_and_due then
      return nil, name .. ' is not an option of ' .. who
    end
    if o[name] then
      return nil, 'enqueue option ' .. name .. ' is given twice'
    end
    local value, broken = option_value(name, ARGV[i + 1])
    if broken then
      return nil, broken
    end
    o[name] = value
  end
  if (o.unique_mode or o.unique_for_ms) and not o.unique then
    return nil, 'unique_mode and unique_for_ms need unique'
  elseif o.unique_mode == 'window' and not o.unique_for_ms then
    return nil, 'unique_mode window needs unique_for_ms'
  elseif o.unique_for_ms and o.unique_mode and o.unique_mode ~= 'window' then
    return nil, 'unique_for_ms is only for unique_mode window'
  end
  if o.unique then
    o.unique_mode = o.unique_mode or (o.unique_for_ms and 'window' or 'finished')
  end
  return o
end
-- [end shared enqueue_options]

-- [shared unique_holder: every copy the same, tests/lua/script_copies_test.cpp]
-- Who holds unique key `key` through `lock` (docs/protocol.md, "Who holds
-- a key"): the holder's id and state, or nil when the key is free. A lock
-- with an expiry is a window, held whatever its holder does; any other is
-- a pointer, held while the holder's row carries the key in a state its
-- own mode covers.
local function holder_of(lock, key, row_root)
  local h = redis.pcall('GET', lock)
  if type(h) ~= 'string' or string.sub(h, 1, 3) ~= 'JOB' then
    return nil
  end
  local row = row_root .. h
  local hash = redis.call('TYPE', row).ok == 'hash'
  if redis.call('PTTL', lock) >= 0 then
    return h, hash and redis.call('HGET', row, 'state') or 'gone'
  end
  if not hash then
    return nil
  end
  local f = redis.call('HMGET', row, 'state', 'unique', 'unique_mode')
  local covered = {pending = true, delayed = true, waiting = true, active = f[3] ~= 'started'}
  if f[2] == key and f[1] and covered[f[1]] then
    return h, f[1]
  end
  return nil
end
-- [end shared unique_holder]

-- [shared unique_enqueue: every copy the same, tests/lua/script_copies_test.cpp]
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

-- A unique duplicate or replace counted in the queue's stats (duplicates,
-- replaced), found beside the row key: a report, so a broken counter is
-- left as it is and named in the log.
local function count_unique(stats, field, who)
  if is_counter_of(stats, field) then
    redis.call('HINCRBY', stats, field, 1)
  else
    redis.log(redis.LOG_WARNING, 'emq ' .. who .. ': ' .. stats .. ' ' .. field .. ' is not an integer counter; ' ..
      '1 not counted, the field left in place for an operator')
  end
end

-- The lock of the key given: KEYS[at], which must be exactly
-- emq:{q}:uniq:<unique> of the row's queue. Without unique, none; nil and
-- the refusal's text when it is another key.
local function lock_given(o, at, queue)
  if not o.unique then
    return nil
  end
  if KEYS[at] ~= queue .. 'uniq:' .. o.unique then
    return nil, 'KEYS[' .. at .. '] must be emq:{q}:uniq:<unique>, the lock of the key given'
  end
  return KEYS[at]
end

-- A job whose row exists, given a unique key: its own holder.
local function duplicate_row(id, row, queue, who)
  count_unique(queue .. 'stats', 'duplicates', who)
  return {0, id, redis.call('TYPE', row).ok == 'hash' and redis.call('HGET', row, 'state') or ''}
end

-- The reply when the key is held (docs/protocol.md, "The optioned
-- enqueue"): [2, holder, state] once a pending or delayed holder's payload
-- (and a delayed one's due time, given due_ms) is replaced in replace mode,
-- else [0, holder, state]. nil when the key is free.
local function held_reply(o, lock, queue, payload, delayed, who)
  local h, state = holder_of(lock, o.unique, queue .. 'job:')
  if h and o.unique_mode == 'replace' and (state == 'pending' or state == 'delayed') then
    redis.call('HSET', queue .. 'job:' .. h, 'payload', payload)
    if o.due_ms and state == 'delayed' then
      redis.call('ZADD', delayed, 'XX', o.due_ms, h)
    end
    count_unique(queue .. 'stats', 'replaced', who)
    return {2, h, state}
  elseif h then
    count_unique(queue .. 'stats', 'duplicates', who)
    return {0, h, state}
  end
  return nil
end

-- The row fields the options add after a new row's own: the key and its
-- mode (and window), the trace context, the group.
local function with_options(fields, o)
  local n = #fields
  if o.unique then
    fields[n + 1], fields[n + 2], fields[n + 3], fields[n + 4] = 'unique', o.unique, 'unique_mode', o.unique_mode
    n = n + 4
    if o.unique_for_ms then
      fields[n + 1], fields[n + 2] = 'unique_for_ms', string.format('%d', o.unique_for_ms)
      n = n + 2
    end
  end
  if o.traceparent then
    fields[n + 1], fields[n + 2] = 'traceparent', o.traceparent
    n = n + 2
  end
  if o.tracestate then
    fields[n + 1], fields[n + 2] = 'tracestate', o.tracestate
    n = n + 2
  end
  if o.group then
    fields[n + 1], fields[n + 2] = 'group', o.group
  end
  return fields
end

-- The new job takes its key: the lock holds its id, expiring after the
-- window in window mode (SET drops any expiry a stale lock had).
local function take_lock(lock, id, o)
  if o.unique_for_ms then
    redis.call('SET', lock, id, 'PX', string.format('%d', o.unique_for_ms))
  elseif lock then
    redis.call('SET', lock, id)
  end
end
-- [end shared unique_enqueue]

-- Groups (docs/protocol.md, "Groups"): a pending job of group g waits in
-- its group's zset, and g joins the rotation's tail when it may run. G
-- holds the six KEYS the group option brings (gwait is not among them:
-- an enqueue never takes a group out of it).
local G
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

-- [shared group_enqueue: every copy the same, tests/lua/script_copies_test.cpp]
-- g back at the rotation's tail when it may run: something pending, not
-- paused, its policy well formed, and not there or in gwait already (an
-- enqueue holds no gwait: a group parked at its cap or for tokens stays
-- there until its next look, even when the id was still counted in it,
-- a row gone while its job ran and enqueued again).
local function wake_enqueued(g)
  local grp = G.grp .. g
  local where = redis.call('HGET', grp, 'in')
  if where == 'rot' or where == 'rate' or where == 'cap' then
    return false
  end
  if redis.call('ZCARD', G.gq .. g) == 0 then
    return false
  end
  local p = policy_of(g)
  if not p or p.paused then
    return false
  end
  redis.call('RPUSH', G.rot, g)
  redis.call('HSET', grp, 'in', 'rot')
  redis.call('PERSIST', grp)
  return true
end

-- A job of g becomes pending: into g's zset, out of its count.
local function enqueue_to_group(g, id, lane)
  local added = redis.call('ZADD', G.gq .. g, lane, id)
  redis.call('ZREM', G.gact .. g, id)
  if added == 1 then
    redis.call('ZINCRBY', G.idx, 1, g)
    redis.call('ZINCRBY', G.idx, 1, '*')
  end
  wake_enqueued(g)
end

-- The group option's six KEYS from KEYS[at] (docs/protocol.md, "The
-- enqueues"): each exactly its name for the row's queue and the group
-- given, and of its type or absent. Sets G; the refusal when they are not.
local function group_given(g, at, queue)
  local names = {'gq:' .. g, 'grp:' .. g, 'gact:' .. g, 'gidx', 'rot', 'groups'}
  local kinds = {'zset', 'hash', 'zset', 'zset', 'list', 'hash'}
  for i, name in ipairs(names) do
    if KEYS[at + i - 1] ~= queue .. name then
      return 'EMQARG KEYS[' .. (at + i - 1) .. '] must be ' .. queue .. name
    end
  end
  for i, kind in ipairs(kinds) do
    local t = redis.call('TYPE', KEYS[at + i - 1]).ok
    if t ~= kind and t ~= 'none' then
      return WRONGTYPE
    end
  end
  G = {q = queue, gq = queue .. 'gq:', grp = queue .. 'grp:', gact = queue .. 'gact:', idx = queue .. 'gidx',
    rot = queue .. 'rot', groups = queue .. 'groups'}
  return nil
end
-- [end shared group_enqueue]

local o, broken = options_of(3, last, true, 'enqueue')
if not o then
  return redis.error_reply('EMQARG ' .. broken)
end
-- emq:{q}: of the row's queue: where delayed, the lock, the holder's row
-- and the stats counter of a duplicate are.
local queue = string.match(row, '^(emq:{[^}]*}:)job:') or ''
local group_at = 3 + (o.due_ms and 1 or 0) + (o.unique and 1 or 0)
if #KEYS ~= group_at - 1 + (o.group and 6 or 0) + (stream and 1 or 0) or
    (o.due_ms and KEYS[3] ~= queue .. 'delayed') then
  return redis.error_reply('EMQARG enqueue takes KEYS row, pending, then delayed with due_ms, the lock with unique, ' ..
    "the group's six with group, then the events stream")
end
local set = o.due_ms and KEYS[3] or pending
local lock, wrong = lock_given(o, o.due_ms and 4 or 3, queue)
if wrong then
  return redis.error_reply('EMQARG ' .. wrong)
end
local refused = o.group and group_given(o.group, group_at, queue)
if refused then
  return redis.error_reply(refused)
end

if redis.call('EXISTS', row) == 1 then
  return lock and duplicate_row(id, row, queue, 'enqueue') or 0
end
local held = lock and held_reply(o, lock, queue, payload, set, 'enqueue')
if held then
  return held
end

local state = o.due_ms and 'delayed' or 'pending'
local fields = {'state', state, 'attempts', '0', 'payload', payload}
-- The row carries its lane only when it is not the default, so a lane-0 row
-- is exactly the seed's three-field row.
if o.lane and o.lane ~= 0 then
  fields[7], fields[8] = 'lane', o.lane
end
fields = with_options(fields, o)
redis.call('HSET', row, unpack(fields))
if G and not o.due_ms then
  enqueue_to_group(o.group, id, o.lane or 0)
else
  redis.call('ZADD', set, o.due_ms or o.lane or 0, id)
end
take_lock(lock, id, o)
emit(state, id, '0')
return 1
