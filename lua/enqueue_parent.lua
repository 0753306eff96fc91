--[[ enqueue_parent: admit a job that runs only after its children finish.
  The parent waits in the waiting set, its children's refs in its deps
  set, until child_done has heard of every one; it is enqueued before its
  children, which may live in any queue. A parent may itself be a child
  (parent ref given): a nested flow.

  KEYS[1]  emq:{q}:job:<id>   hash  the parent's row
  KEYS[2]  emq:{q}:waiting    zset  member id, score time enqueued (ms)
  KEYS[3]  emq:{q}:deps:<id>  set   the refs of the children still awaited
  KEYS[4]  emq:{q}:meta       hash  parents = 1 once a parent is enqueued
                                    here; flows = 1 once a child is
  KEYS[5]  emq:{q}:uniq:<k>   string optional, given exactly with unique:
                                    the lock (docs/protocol.md, "Unique jobs")
  KEYS[6]  emq:{q}:events     stream optional, last: given, the entry waiting
  ARGV[1]  id                 branded job id, JOB_...
  ARGV[2]  payload            opaque bytes
  ARGV[3]  lane               integer -1000..1000, where it waits once released
  ARGV[4]  on_child_failure   fail, wait or ignore
  ARGV[5]  parent ref         <queue>:<id> of this job's own parent, or ""
  ARGV[6]… child refs         <queue>:<id>, at least one, each once; they
                              end at the first ARGV that is an option's
                              name
  ARGV[m]… options            name value pairs, as enqueue's: unique,
                              unique_mode, unique_for_ms, traceparent,
                              tracestate, group (written in the row
                              only: a waiting parent is in no group's
                              zset until child_done or children_done
                              releases it to its group)
  ARGV[n]  events             with the stream, last: its length, 1..10000000

  Reply:   1 enqueued: state waiting (row: state, attempts, payload,
             children, on_child_failure, lane if not 0, parent if given,
             group if given),
             id in waiting, the refs in deps, meta parents = 1, and
             flows = 1 when it has a parent
           0 duplicate, without unique (the row exists, whatever its
             state; nothing changes)
           [0, holder id, holder state] duplicate, with unique (the row
             exists, or the key is held): nothing changes but stats
             duplicates; no deps are written
           [2, holder id, holder state] replaced (unique_mode replace, a
             pending or delayed holder's payload), stats replaced + 1
  Errors:  EMQKIND when the id is not JOB-namespaced
           EMQARG  when the lane, the policy, a ref or an option is
                   malformed, no child is given, a child is given twice, or
                   the KEYS are not the ones the options need
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

local row, waiting, deps, meta = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, payload, lane_arg, policy, parent = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
-- The options end before the stream's length, when it is given; the
-- child refs end before the first ARGV that is an option's name (a ref has
-- a colon, a name never).
local options_last = stream and #ARGV - 1 or #ARGV
local last = 5
local option_names = {lane = true, due_ms = true, unique = true, unique_mode = true, unique_for_ms = true,
  traceparent = true, tracestate = true, group = true}
while last < options_last and not option_names[ARGV[last + 1]] do
  last = last + 1
end

-- A ref is <queue>:<id>: a queue name (1-64 bytes of [A-Za-z0-9_.-], so
-- never a colon) and an id past the wire's JOB gate.
local function is_ref(ref)
  local queue, job = string.match(ref or '', '^([A-Za-z0-9_.%-]+):(.*)$')
  return queue ~= nil and #queue <= 64 and string.sub(job, 1, 3) == 'JOB'
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

-- [shared job_id: every copy the same, tests/lua/script_copies_test.cpp]
if string.sub(id, 1, 3) ~= 'JOB' then
  return redis.error_reply('EMQKIND job id must be JOB-namespaced')
end
-- [end shared job_id]
-- [shared lane_argument: every copy the same, tests/lua/script_copies_test.cpp]
local lane = string.match(lane_arg or '', '^-?%d+$') and tonumber(lane_arg)
if not lane or lane < -1000 or lane > 1000 then
  return redis.error_reply('EMQARG lane must be an integer in -1000..1000')
end
-- [end shared lane_argument]
if policy ~= 'fail' and policy ~= 'wait' and policy ~= 'ignore' then
  return redis.error_reply('EMQARG on_child_failure must be fail, wait or ignore')
end
if parent ~= '' and not is_ref(parent) then
  return redis.error_reply('EMQARG parent ref must be <queue>:<id> with a JOB id, or empty')
end
if last < 6 then
  return redis.error_reply('EMQARG enqueue_parent takes at least one child ref')
end
local seen = {}
for i = 6, last do
  local ref = ARGV[i]
  if not is_ref(ref) then
    return redis.error_reply('EMQARG child ref ' .. (i - 5) .. ' must be <queue>:<id> with a JOB id')
  end
  if seen[ref] then
    return redis.error_reply('EMQARG child ref ' .. ref .. ' is given twice')
  end
  seen[ref] = true
end
local o, broken = options_of(last + 1, options_last, false, 'enqueue_parent')
if not o then
  return redis.error_reply('EMQARG ' .. broken)
end
if #KEYS ~= 4 + (o.unique and 1 or 0) + (stream and 1 or 0) then
  return redis.error_reply('EMQARG enqueue_parent takes KEYS row, waiting, deps, meta, then the lock with unique, ' ..
    'then the events stream')
end
local queue = string.match(row, '^(emq:{[^}]*}:)job:') or ''
local lock, wrong = lock_given(o, 5, queue)
if wrong then
  return redis.error_reply('EMQARG ' .. wrong)
end

if redis.call('EXISTS', row) == 1 then
  return lock and duplicate_row(id, row, queue, 'enqueue_parent') or 0
end
local held = lock and held_reply(o, lock, queue, payload, nil, 'enqueue_parent')
if held then
  return held
end

local children = last - 5
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', row, unpack(with_options({'state', 'waiting', 'attempts', '0', 'payload', payload, 'children',
  children, 'on_child_failure', policy}, o)))
if lane ~= 0 then
  redis.call('HSET', row, 'lane', lane)
end
if parent ~= '' then
  redis.call('HSET', row, 'parent', parent)
end
redis.call('ZADD', waiting, now, id)
-- A deps set left by an earlier job of the same id must not add to this one.
redis.call('DEL', deps)
-- In slices: unpack of thousands of values would overflow Lua's C stack.
for first = 6, last, 1000 do
  redis.call('SADD', deps, unpack(ARGV, first, math.min(first + 999, last)))
end
-- parents tells a speaker which queues' claimed jobs may need their
-- children's results; flows, which queues' jobs must tell a parent.
if parent ~= '' then
  redis.call('HSET', meta, 'parents', '1', 'flows', '1')
else
  redis.call('HSET', meta, 'parents', '1')
end
take_lock(lock, id, o)
emit('waiting', id, '0')
return 1
