-- GCRA with none of the product's guarantees, the cheapest script that decides at all: the instant as a
-- floating-point number, a fixed one-second TTL, no deadline, no clock-step guard and an empty reply. For
-- comparing Redis CPU per call with script-cpu.sh only.
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local limit, window, burst, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local interval = window / limit
local stored = redis.call('GET', KEYS[1])
local tat = now
if stored then
  local v = tonumber(stored)
  if v > now then tat = v end
end
local ahead = tat - now
local allowed = ahead <= (burst - cost) * interval
if allowed then
  ahead = ahead + cost * interval
  redis.call('SET', KEYS[1], now + ahead, 'PX', 1000)
end
return { allowed and 1 or 0, 0, 0, 0, 0, 0, 0, 0 }
