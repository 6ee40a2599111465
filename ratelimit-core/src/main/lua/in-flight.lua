--[[
In flight: at most a number of one client's requests at once under one limit. Each request holds a lease, a
member of the client's sorted set scored with the instant, in microseconds, at which it expires unless its
holder renews it; a lease of an instance that died holding it expires, so no permit is lost for good.

Not runnable as is: the store places what the standalone scripts share before it.

Calling convention:
  KEYS[1]  the client's set of leases under the limit
  ARGV[1]  now in microseconds, or "" to use Redis TIME
  ARGV[2]  "acquire", "renew" or "release"
  ARGV[3]  the lease, unique to its holder
  ARGV[4]  acquire: the limit, at least 1
  ARGV[5]  acquire and renew: how long the lease lasts unless renewed, in microseconds
  ARGV[6]  optional, the Redis TIME in microseconds after which the caller no longer waits (time.lua): a late
           call takes nothing
Returns: to an acquire, { 1 if the lease was granted else 0, the leases held, this one included if granted,
the microseconds until the first of them expires }; to a renew, { 1 if the lease was still held else 0 }; to
a release, { the leases held }.
]]

local now, late = decision_time(1, 6)
if late then
  return late
end
local key, operation, lease = KEYS[1], ARGV[2], ARGV[3]
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)

if operation == 'release' then
  redis.call('ZREM', key, lease)
  return { redis.call('ZCARD', key) }
end

local lasts = tonumber(ARGV[5]) or invalid(5, 'lease')
-- Redis' own expiry only collects a set nobody renews; the scores decide, on the caller's clock if it sends one
local function keep()
  redis.call('PEXPIRE', key, math.ceil(lasts / 1000) + 1000)
end

if operation == 'renew' then
  local renewed = redis.call('ZADD', key, 'XX', 'CH', now + lasts, lease)
  keep()
  return { renewed }
end

if operation ~= 'acquire' then
  error('ARGV[2] must be acquire, renew or release, was "' .. tostring(operation) .. '"')
end
local limit = tonumber(ARGV[4]) or invalid(4, 'limit')
local held = redis.call('ZCARD', key)
if held < limit then
  redis.call('ZADD', key, now + lasts, lease)
  keep()
  return { 1, held + 1, 0 }
end
local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return { 0, held, tonumber(first[2]) - now }
