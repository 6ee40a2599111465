
--[[
Sliding window counter: the counts of the current and the previous aligned window, the previous one
weighted by how much of it still overlaps the last `window`:
  estimate = previous * (1 - elapsed / window) + current
A request passes while estimate < limit - cost + 1 (estimate < limit for a cost of 1). Both sides are
multiplied by the window so that the comparison is exact.

State: one integer, (current + 2^16 * previous) * 2^21 + (window index mod 2^21), which Redis stores as a
machine word rather than as a string. Only the index modulo 2^21 is kept: a key expires at most
max(1 s, 2 windows + 2 ms) after it was written, so with Redis TIME it never outlives 2^20 windows of at
least 1 µs, and a stored index up to 2^20 windows after the current one is read as a window ahead (Redis'
clock stepped back). (A caller that passes its own clock must not move it forward by 2^20 windows or more
within one second.) Two counts of a limit above 65535 do not fit beside the index; such a state is kept as
the string "<window index>:<previous count>:<current count>". Both forms are read whatever the limit.
]]

-- The base of the packed state's two counts.
local COUNTS = 65536

local function reset_after(window, elapsed, previous, current)
  if current > 0 then
    return 2 * window - elapsed
  elseif previous > 0 then
    return window - elapsed
  end
  return 0
end

-- Writes both counts of the current window.
local function save(key, limit, window, index, elapsed, previous, current)
  local state
  if limit < COUNTS then
    state = (current + COUNTS * previous) * PACK + packed_index(index)
  else
    state = string.format('%d:%d:%d', index, previous, current)
  end
  -- numbers go to Redis as they are: it writes whole numbers out in full, never with an exponent
  redis.call('SET', key, state, 'PX', ttl_ms(reset_after(window, elapsed, previous, current)))
end

-- The first microsecond at which the request fits: later in this window as the previous one fades, or
-- in the next, once the current count has become the previous one.
local function retry_after(limit, window, cost, elapsed, previous, current)
  local threshold = limit - cost + 1
  local headroom = threshold - current
  if headroom > 0 and previous > 0 then
    local at = window - ceil_div(headroom * window, previous) + 1
    if at < window then
      return at - elapsed
    end
  end
  if current < threshold then
    return window - elapsed
  end
  local at = window - ceil_div(threshold * window, current) + 1
  return window - elapsed + at
end

-- The stored counts and how many windows before `index` they were written, negative for a window after
-- it; nil when the key holds none (a key of another type, as when the policy changed its algorithm).
local function load(key, index)
  local age, counts = load_window(key, index)
  if type(counts) == 'number' then
    local stored_previous = floor_div(counts, COUNTS)
    return age, stored_previous, counts - stored_previous * COUNTS
  end
  local stored_previous, stored_current = string.match(counts or '', '^(%d+):(%d+)$')
  if stored_previous then
    return age, tonumber(stored_previous), tonumber(stored_current)
  end
  return nil
end

-- === decision
local index = floor_div(now, window)
local elapsed = now - index * window
local previous, current = 0, 0
-- a key of another type reads as empty and is overwritten
local age, stored_previous, stored_current = load(key, index)
if age then
  -- capped in case a larger policy of the same name wrote it
  if age == 0 then
    previous, current = math.min(stored_previous, limit), math.min(stored_current, limit)
  elseif age == 1 then
    previous = math.min(stored_current, limit)
  elseif age < 0 then
    -- a window after this one, which no clock running forward writes: Redis' clock stepped back. It is
    -- taken as the previous window, so that its count still holds the client back but fades out within
    -- this window (as the current one it would weigh for two); written back at once, even for a denied
    -- request, so that the next window finds it gone as the retry-after promises.
    previous = math.min(stored_current, limit)
    save(key, limit, window, index, elapsed, previous, current)
  end
end
-- previous * (window - elapsed) + current * window < (limit - cost + 1) * window, with every product
-- below limit * window, which the policy keeps below 2^53
local admitted = previous * (window - elapsed) < (limit - cost + 1 - current) * window
local allowed = admitted

-- === take
if allowed then
  current = current + cost
  save(key, limit, window, index, elapsed, previous, current)
end

-- === reply
local headroom = (limit - current) * window - previous * (window - elapsed)
local remaining = (headroom > 0) and ceil_div(headroom, window) or 0
-- a request that fits but was refused by a stacked policy has nothing to wait for here
local retry = (allowed or admitted) and 0 or retry_after(limit, window, cost, elapsed, previous, current)
return { allowed and 1 or 0, remaining, retry, reset_after(window, elapsed, previous, current), 0, 0, 0, 0,
  now }
