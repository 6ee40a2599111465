
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

local function reset_after(s)
  if s.current > 0 then
    return 2 * s.window - s.elapsed
  elseif s.previous > 0 then
    return s.window - s.elapsed
  end
  return 0
end

-- Writes both counts of the current window.
local function save(s)
  local state
  if s.limit < COUNTS then
    state = (s.current + COUNTS * s.previous) * PACK + packed_index(s.index)
  else
    state = string.format('%d:%d:%d', s.index, s.previous, s.current)
  end
  -- numbers go to Redis as they are: it writes whole numbers out in full, never with an exponent
  redis.call('SET', s.key, state, 'PX', ttl_ms(reset_after(s)))
end

local function load(key, limit, window, burst, cost, delay_after, now)
  local index = floor_div(now, window)
  local s = { key = key, limit = limit, window = window, cost = cost, now = now, previous = 0, current = 0,
              index = index, elapsed = now - index * window }
  -- a key of another type (the policy changed its algorithm) reads as empty and is overwritten
  local stored = redis.pcall('GET', key)
  if type(stored) == 'string' then
    -- age: how many windows ago the state was written, negative for a window after this one
    local age, previous, current
    local value = tonumber(stored)
    if value then
      local counts = floor_div(value, PACK)
      previous = floor_div(counts, COUNTS)
      current = counts - previous * COUNTS
      age = age_of(index, value - counts * PACK)
    else
      local stored_index
      stored_index, previous, current = string.match(stored, '^(-?%d+):(%d+):(%d+)$')
      if stored_index then
        age, previous, current = index - tonumber(stored_index), tonumber(previous), tonumber(current)
      end
    end
    -- capped in case a larger policy of the same name wrote it
    if age == 0 then
      s.previous, s.current = math.min(previous, limit), math.min(current, limit)
    elseif age == 1 then
      s.previous = math.min(current, limit)
    elseif age and age < 0 then
      -- a window after this one, which no clock running forward writes: Redis' clock stepped back. It is
      -- taken as the previous window, so that its count still holds the client back but fades out within
      -- this window (as the current one it would weigh for two); written back at once, even for a denied
      -- request, so that the next window finds it gone as the retry-after promises.
      s.previous = math.min(current, limit)
      save(s)
    end
  end
  return s
end

-- previous * (window - elapsed) + current * window < (limit - cost + 1) * window, with every product
-- below limit * window, which the policy keeps below 2^53
local function admits(s)
  return s.previous * (s.window - s.elapsed) < (s.limit - s.cost + 1 - s.current) * s.window
end

local function take(s)
  s.current = s.current + s.cost
  save(s)
end

-- The first microsecond at which the request fits: later in this window as the previous one fades, or
-- in the next, once the current count has become the previous one.
local function retry_after(s)
  local threshold = s.limit - s.cost + 1
  local headroom = threshold - s.current
  if headroom > 0 and s.previous > 0 then
    local at = s.window - ceil_div(headroom * s.window, s.previous) + 1
    if at < s.window then
      return at - s.elapsed
    end
  end
  if s.current < threshold then
    return s.window - s.elapsed
  end
  local at = s.window - ceil_div(threshold * s.window, s.current) + 1
  return s.window - s.elapsed + at
end

local function reply(s, allowed)
  local headroom = (s.limit - s.current) * s.window - s.previous * (s.window - s.elapsed)
  local remaining = (headroom > 0) and ceil_div(headroom, s.window) or 0
  -- a request that fits but was refused by a stacked policy has nothing to wait for here
  local retry = (allowed or admits(s)) and 0 or retry_after(s)
  return { allowed and 1 or 0, remaining, retry, reset_after(s), 0, 0, 0, 0 }
end

local algorithm = { load = load, admits = admits, take = take, reply = reply }
