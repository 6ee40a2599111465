
--[[
Sliding log: the time of every permit taken within the last `window`, oldest first; a request passes
while fewer than limit - cost + 1 remain. Exact, but its memory grows with the limit.

State: a list of microsecond timestamps, one entry per permit, never longer than the limit. Entries that
have left the window are dropped when a request is allowed; a denied request writes nothing, unless it
finds entries after now (Redis' clock stepped back), which it moves to now.
]]

-- Lists are read in chunks: most calls only look at the oldest few entries.
local FIRST_CHUNK = 16

-- Counts the entries at the head of the list that have left the window (time <= now - window).
local function count_expired(key, length, cutoff)
  local expired, chunk = 0, FIRST_CHUNK
  while expired < length do
    local times = redis.call('LRANGE', key, expired, expired + chunk - 1)
    for i = 1, #times do
      if tonumber(times[i]) > cutoff then
        return expired
      end
      expired = expired + 1
    end
    chunk = chunk * 2
  end
  return expired
end

-- Counts the entries at the tail of the list that lie after now.
local function count_ahead(key, length, now)
  local ahead, chunk = 0, FIRST_CHUNK
  while ahead < length do
    local times = redis.call('LRANGE', key, -(ahead + chunk), -(ahead + 1))
    for i = #times, 1, -1 do
      if tonumber(times[i]) <= now then
        return ahead
      end
      ahead = ahead + 1
    end
    chunk = chunk * 2
  end
  return ahead
end

-- Lua's unpack() is bounded by the C stack, so long pushes go in parts.
local PUSH_CHUNK = 1000

-- Appends count entries at time, then gives the key the life of its newest entry.
local function push(key, time, count, window)
  -- numbers go to Redis as they are: it writes whole numbers out in full, never with an exponent
  local left = count
  while left > 0 do
    local part = {}
    for i = 1, math.min(left, PUSH_CHUNK) do
      part[i] = time
    end
    redis.call('RPUSH', key, unpack(part))
    left = left - #part
  end
  redis.call('PEXPIRE', key, ttl_ms(window))
end

-- The time of the i-th (0-based) entry of the list.
local function entry_time(key, i)
  return tonumber(redis.call('LINDEX', key, i))
end

-- === decision
-- expired: the entries at the head that have left the window; size: those still inside it
local expired, size, foreign = 0, 0, false
-- a key of another type (the policy changed its algorithm) reads as empty and is replaced
local length = redis.pcall('LLEN', key)
if type(length) == 'number' then
  if length > 0 and entry_time(key, -1) > now then
    -- entries after now, which no clock running forward writes: Redis' clock stepped back. They are moved
    -- to now, so that they still count but leave the window at most one window from now, instead of
    -- holding the client until the clock catches up; written back at once, even for a denied request,
    -- so that the retry-after it reports holds.
    local ahead = count_ahead(key, length, now)
    redis.call('LTRIM', key, 0, -(ahead + 1))
    push(key, now, ahead, window)
  end
  expired = count_expired(key, length, now - window)
  size = length - expired
else
  foreign = true
end
local allowed = size + cost <= limit

-- === take
if allowed then
  if foreign then
    redis.call('DEL', key)
  elseif expired > 0 then
    redis.call('LTRIM', key, expired, -1)
    expired = 0
  end
  push(key, now, cost, window)
  size = size + cost
end

-- === reply
-- the request fits once enough of the oldest entries have left the window; a request that fits but was
-- refused by a stacked policy has nothing to wait for here
local must_expire = size + cost - limit
local retry = 0
if not allowed and must_expire > 0 then
  retry = entry_time(key, expired + must_expire - 1) + window - now
end
local reset = 0
if allowed then
  -- the newest entry is this request's
  reset = window
elseif size > 0 then
  reset = entry_time(key, expired + size - 1) + window - now
end
return { allowed and 1 or 0, limit - size, retry, reset, 0, 0, 0, 0, now }
