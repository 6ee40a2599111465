
--[[
Fixed window: counts the permits taken in each window, windows aligned to multiples of `window` since the
clock's zero (the Unix epoch with Redis TIME), or the days, weeks or months of a calendar window. The count starts over at each boundary, so up to twice the
limit can pass across one.

State: one integer, count * 2^21 + (window index mod 2^21), which Redis stores as a machine word rather
than as a string. Only the index modulo 2^21 is kept: a key expires at most max(1 s, window + 2 ms) after
it was written, so with Redis TIME it never outlives 2^20 windows of at least 1 µs, and a stored index up
to 2^20 windows after the current one is read as a window ahead (Redis' clock stepped back). (A caller
that passes its own clock must not move it forward by 2^20 windows or more within one second.) A limit of
2^32 or more does not fit beside the index; such a window is kept as the string "<window index>:<count>".
Both forms are read whatever the limit.
]]

-- Writes the count of the current window.
local function save(key, limit, used, index, until_next)
  local state
  if limit < 2^32 then
    state = used * PACK + packed_index(index)
  else
    state = string.format('%d:%d', index, used)
  end
  -- numbers go to Redis as they are: it writes whole numbers out in full, never with an exponent
  redis.call('SET', key, state, 'PX', ttl_ms(until_next))
end

-- The stored count and how many windows before `index` it was written, negative for a window after it; nil
-- when the key holds none (a key of another type, as when the policy changed its algorithm).
local function load(key, index)
  local age, count = load_window(key, index)
  if type(count) == 'string' then
    count = tonumber(string.match(count, '^(%d+)$'))
  end
  if count then
    return age, count
  end
  return nil
end

-- === decision
local index, until_next = window_at(now, window)
local used = 0
-- a key of another type reads as empty and is overwritten
local age, count = load(key, index)
if age and age <= 0 then
  -- capped in case a larger policy of the same name wrote it
  used = math.min(count, limit)
  if age < 0 then
    -- a window after this one, which no clock running forward writes: Redis' clock stepped back. Its
    -- count is kept for the rest of this window, so the step lets no more through than the limit and
    -- holds the client at most until the next window; written back at once, even for a denied
    -- request, so that the next window starts over as the retry-after promises.
    save(key, limit, used, index, until_next)
  end
end
local admitted = used + cost <= limit
local allowed = admitted

-- === take
if allowed then
  used = used + cost
  save(key, limit, used, index, until_next)
end

-- === reply
-- a request that fits but was refused by a stacked policy has nothing to wait for here
local retry = (not allowed and not admitted) and until_next or 0
local reset = (used > 0) and until_next or 0
return { allowed and 1 or 0, limit - used, retry, reset, 0, 0, 0, 0, now }
