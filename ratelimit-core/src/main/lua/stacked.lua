--[[
Stacked limits: one request of one client decided under several policies at once, all or nothing. The
request passes only if every policy admits it; a request that one policy refuses takes nothing from the
others.

Not runnable as is: the store generates the stacked script by placing, before this driver, each standalone
script's algorithm part (the helpers and the algorithm's pieces, above its entry point line) in the table
`define`, as a function that ends with
  algorithms['<file name without .lua>'] = algorithm
then time.lua, which every entry shares (see docs/redis.md). The algorithms' own code is thereby exactly the
code of the standalone scripts, and a call defines only the algorithms it names.

Calling convention:
  KEYS[i]  the state key of policy i; all keys of one client share a hash tag, so one slot in a cluster
  ARGV[1]  now in microseconds, or "" to use Redis TIME
  then six values per policy, in the order of KEYS:
           algorithm (a script's file name without .lua), limit, window in microseconds, burst, cost,
           queued requests that pass without waiting (leaky bucket; "" = 0)
  ARGV[2 + 6n], n = #KEYS: optional, the Redis TIME in microseconds after which the caller no longer
           waits; a call run later changes nothing and fails with an error starting "LATE"
Returns: eight integers per policy, in the order of KEYS, as the standalone scripts return them.
]]

local now, late = decision_time(1, 2 + 6 * #KEYS)
if late then
  return late
end

local chosen, states = {}, {}
local allowed = true
for i, key in ipairs(KEYS) do
  local base = 1 + (i - 1) * 6
  local name = ARGV[base + 1]
  local algorithm = algorithms[name]
  if algorithm == nil then
    if define[name] == nil then
      error('ARGV[' .. (base + 1) .. '] names no algorithm: "' .. tostring(name) .. '"')
    end
    define[name]()
    algorithm = algorithms[name]
  end
  chosen[i] = algorithm
  states[i] = algorithm.load(key, tonumber(ARGV[base + 2]) or invalid(base + 2, 'limit'),
    tonumber(ARGV[base + 3]) or invalid(base + 3, 'window'), tonumber(ARGV[base + 4]) or invalid(base + 4, 'burst'),
    tonumber(ARGV[base + 5]) or invalid(base + 5, 'cost'), delay_after(base + 6), now)
  -- once one policy refuses, the others are still read, to describe them, but not asked
  allowed = allowed and algorithm.admits(states[i])
end

local reply = {}
for i = 1, #KEYS do
  if allowed then
    chosen[i].take(states[i])
  end
  for _, value in ipairs(chosen[i].reply(states[i], allowed)) do
    reply[#reply + 1] = value
  end
end
return reply
