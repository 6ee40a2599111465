--[[
Stacked limits: one request of one client decided under several policies at once, all or nothing. The
request passes only if every policy admits it; a request that one policy refuses takes nothing from the
others.

Not runnable as is: the store generates the stacked script by placing, before this driver, what the
standalone scripts share (the helpers and time.lua, above entry.lua's entry point line), then in the table
`define`, for each algorithm, a function that defines the algorithm's functions (its pieces above their
"-- === decision" line) and returns its decision:
  function(key, limit, window, burst, cost, shaping, now)
    <the decision section>
    return allowed, function(allowed) <the take and reply sections> end
  end
and `decider(i)`, of decider.lua, which defines the algorithm that ARGV[i] names at its first use.
The decision says whether this policy admits the request; the function it returns takes the request if the
whole stack is allowed and returns the reply. The algorithms' own code is thereby exactly the code of the
standalone scripts, and a call defines only the algorithms it names (see docs/redis.md).

Calling convention:
  KEYS[i]  the state key of policy i; all keys of one client share a hash tag, so one slot in a cluster
  ARGV[1]  now in microseconds, or "" to use Redis TIME
  then six values per policy, in the order of KEYS:
           algorithm (a script's file name without .lua), limit, window in microseconds, burst, cost,
           shaping, as ARGV[6] of the standalone scripts ("" = 0)
  ARGV[2 + 6n], n = #KEYS: optional, the Redis TIME in microseconds after which the caller no longer
           waits; a call run later changes nothing and fails with an error starting "LATE"
  ARGV[3 + 6n]: optional, "peek" to take nothing and reply as to a request that another limit refused,
           as a store does for the limits of a stack that spans several Cluster slots; or "restore", where
           each policy's cost is instead the permits its caller last heard were left, to take from each
           state what it has left beyond those, so that a state Redis lost is at most as full as the fullest
           its callers knew, however many restore it
  ARGV[4 + 6n]: optional, as ARGV[8] of the standalone scripts, one character per key
  ARGV[5 + 6n]: to a "restore", how long, in ms, each restored state is marked restored, so that the other
           callers that expect it tell what they heard as well (time.lua)
  ARGV[6 + 6n]: optional, each policy's penalty in microseconds, comma-separated in the order of KEYS: a
           policy that refuses the request by itself refuses its client for that long, whatever it would
           decide meanwhile, with the rest of the penalty as the retry-after, and takes nothing from it
Returns: nine integers per policy, in the order of KEYS, as the standalone scripts return them; to a
"restore", the permits each state had left before it.
]]

local now, late = decision_time(1, 2 + 6 * #KEYS, 4 + 6 * #KEYS)
if late then
  return late
end

if ARGV[3 + 6 * #KEYS] == 'restore' then
  local left = {}
  for i, key in ipairs(KEYS) do
    local base = 1 + (i - 1) * 6
    local decide = decider(base + 1)
    local limit, window = tonumber(ARGV[base + 2]) or invalid(base + 2, 'limit'),
      read_window(base + 3)
    local burst, known = tonumber(ARGV[base + 4]) or invalid(base + 4, 'burst'),
      tonumber(ARGV[base + 5]) or invalid(base + 5, 'permits left')
    local shaping = read_shaping(base + 6)
    -- twice at most: a fresh leaky bucket's first request goes into service, which its free places do not count
    for round = 1, 2 do
      local _, peek = decide(key, limit, window, burst, 1, shaping, now)
      local now_left = peek(false)[2]
      left[i] = left[i] or now_left
      if now_left <= known then
        break
      end
      local admitted, take = decide(key, limit, window, burst, now_left - known, shaping, now)
      take(admitted)
    end
    redis.call('SET', key .. RESTORED, 1, 'PX', tonumber(ARGV[5 + 6 * #KEYS]) or invalid(5 + 6 * #KEYS, 'marked'))
  end
  return left
end

local penalties = {}
local listed = ARGV[6 + 6 * #KEYS]
if listed ~= nil and listed ~= '' then
  for value in string.gmatch(listed, '[^,]+') do
    penalties[#penalties + 1] = tonumber(value) or invalid(6 + 6 * #KEYS, 'penalties')
  end
end

local finish, blocked = {}, {}
local peek = ARGV[3 + 6 * #KEYS] == 'peek'
local allowed = not peek
for i, key in ipairs(KEYS) do
  local base = 1 + (i - 1) * 6
  local penalty = penalties[i] or 0
  local admitted
  admitted, finish[i] = decider(base + 1)(key, tonumber(ARGV[base + 2]) or invalid(base + 2, 'limit'),
    read_window(base + 3), tonumber(ARGV[base + 4]) or invalid(base + 4, 'burst'),
    tonumber(ARGV[base + 5]) or invalid(base + 5, 'cost'), read_shaping(base + 6), now)
  if penalty > 0 then
    local until_at = tonumber(redis.call('GET', key .. PENALTY))
    if until_at ~= nil and until_at > now then
      blocked[i], admitted = until_at - now, false
    elseif not admitted and not peek then
      -- refused by this policy itself: the penalty starts
      redis.call('SET', key .. PENALTY, now + penalty, 'PX', ttl_ms(penalty))
      blocked[i] = penalty
    end
  end
  allowed = allowed and admitted
end

local reply = {}
for i = 1, #KEYS do
  local values = finish[i](allowed)
  if blocked[i] then
    -- refused for the rest of the penalty, in whole microseconds
    values[1], values[2], values[3], values[5], values[6], values[8] = 0, 0, blocked[i], 0, 0, 0
    if values[4] < blocked[i] then
      values[4], values[7] = blocked[i], 0
    end
  end
  for _, value in ipairs(values) do
    reply[#reply + 1] = value
  end
end
return reply
