--[[
Give-back: the permits that allowed requests took, given back at once, as if each request had never been
taken; afterwards no key is more lenient than that, and it may be stricter. A bucket's instant moves back by
the cost, never before now; a fixed window gives the cost back while the window it was taken in lasts; a
sliding window counter takes it from the current count in that window and from the previous count in the
next; a sliding log drops the request's own entries while they are in the window.

Not runnable as is: the store generates the give-back script by placing, before this driver, what the
standalone scripts share (the helpers and time.lua, above entry.lua's entry point line), then in the table
`give_back`, for each algorithm, a function of (key, limit, window, burst, cost, now, taken_at) that
defines the algorithm's functions (its pieces above their "-- === decision" line) and runs its give-back
piece (give-back-<algorithm>.lua; the three bucket algorithms share give-back-bucket.lua), then release.lua.

Calling convention:
  KEYS[i]  the state key of limit i
  ARGV[1]  now in microseconds, or "" to use Redis TIME
  then six values per limit, in the order of KEYS:
           algorithm (a script's file name without .lua), limit, window in microseconds, burst, cost,
           the instant the request was taken at, as the decision replied it (its ninth integer)
  ARGV[2 + 6n], n = #KEYS: optional, the Redis TIME in microseconds after which the caller no longer
           waits; a call run later changes nothing and fails with an error starting "LATE"
Returns: one integer, the number of limits given back.
]]

local now, late = decision_time(1, 2 + 6 * #KEYS)
if late then
  return late
end

for i, key in ipairs(KEYS) do
  local base = 1 + (i - 1) * 6
  local name = ARGV[base + 1]
  local give = give_back[name]
  if give == nil then
    error('ARGV[' .. (base + 1) .. '] names no algorithm: "' .. tostring(name) .. '"')
  end
  local ttl = redis.call('PTTL', key)
  give(key, tonumber(ARGV[base + 2]) or invalid(base + 2, 'limit'),
    read_window(base + 3), tonumber(ARGV[base + 4]) or invalid(base + 4, 'burst'),
    tonumber(ARGV[base + 5]) or invalid(base + 5, 'cost'), now,
    tonumber(ARGV[base + 6]) or invalid(base + 6, 'taken at'))
  -- a state the give-back left full is gone: released
  if redis.call('EXISTS', key) == 0 then
    release(key, ttl)
  end
end
return { #KEYS }
