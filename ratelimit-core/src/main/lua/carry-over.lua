--[[
Carry-over: a policy whose limit, window or burst changed while the application runs keeps its state under a
key of its own, and each client takes the permits it has in use under the policy it changed from along, once,
at its first request after the change: its capacity less what it has left there (and for a leaky bucket the
request in service), as if taken now under the new policy, up to what a fresh key
admits in a row. Nothing else changes: the store then decides the request as usual.

Not runnable as is: the store generates the carry-over script like the stacked one, from what the standalone
scripts share, the table `define` of stacked.lua with decider.lua, release.lua, and this driver.

Calling convention:
  KEYS[1]  the client's state key under the new policy
  KEYS[i]  i > 1: its state keys under the policies it changed from, newest first
  ARGV[1]  now in microseconds, or "" to use Redis TIME
  then six values per key, in the order of KEYS:
           algorithm (a script's file name without .lua), limit, window in microseconds, burst, capacity
           (the burst for a bucket, else the limit), queued requests that pass without waiting ("" = 0)
  ARGV[2 + 6n], n = #KEYS: optional, the Redis TIME in microseconds after which the caller no longer
           waits; a call run later changes nothing and fails with an error starting "LATE"
Returns: one integer, the permits carried over; 0 when the new key exists already or no old key does.
]]

local now, late = decision_time(1, 2 + 6 * #KEYS)
if late then
  return late
end

if redis.call('EXISTS', KEYS[1]) == 1 then
  return { 0 }
end

local function values(base, cost)
  return tonumber(ARGV[base + 2]) or invalid(base + 2, 'limit'),
    read_window(base + 3), tonumber(ARGV[base + 4]) or invalid(base + 4, 'burst'),
    cost, read_shaping(base + 6), now
end

for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    local base = 1 + (i - 1) * 6
    local _, finish = decider(base + 1)(KEYS[i], values(base, 1))
    -- the reply to a request refused by another limit: what the key has left and until it is full, taking nothing
    local reply = finish(false)
    local used = (tonumber(ARGV[base + 5]) or invalid(base + 5, 'capacity')) - reply[2]
    if ARGV[base + 1] == 'leaky-bucket' and reply[4] > 0 then
      -- the request in service, which the free places of the queue do not count
      used = used + 1
    end
    release(KEYS[i], redis.call('PTTL', KEYS[i]))
    redis.call('DEL', KEYS[i])
    -- at most what a fresh key admits in a row: its capacity, and a leaky bucket the request in service too
    local admits = tonumber(ARGV[6]) or invalid(6, 'capacity')
    if ARGV[2] == 'leaky-bucket' then
      admits = admits + 1
    end
    local carried = math.min(used, admits)
    if carried > 0 then
      local _, take = decider(2)(KEYS[1], values(1, carried))
      take(true)
    end
    return { carried }
  end
end
return { 0 }
