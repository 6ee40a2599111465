-- The produced gcra.lua stripped by hand: the same decisions and reply, its helpers kept as the few
-- functions they are, everything else inline, arguments read without naming a bad one. For comparing Redis
-- CPU per call with script-cpu.sh only.
local floor = math.floor
local function floor_div(a, b)
  local q = floor(a / b)
  local r = a - q * b
  if r < 0 then
    return q - 1
  elseif r >= b then
    return q + 1
  end
  return q
end
local function ttl_ms(micros)
  if micros <= 999000 then
    return 1000
  end
  return -floor_div(-micros, 1000) + 1
end
local function micros(ticks, scale)
  if ticks <= 0 then
    return 0, 0
  elseif scale == 1 then
    return ticks, 0
  end
  local us = -floor_div(-ticks, scale)
  return us, floor_div((us * scale - ticks) * 1000, scale)
end
local function save_ahead(key, now, ahead, scale)
  local whole, ticks = ahead, 0
  if scale > 1 then
    whole = floor_div(ahead, scale)
    ticks = ahead - whole * scale
  end
  local at = now + whole
  if ticks > 0 then
    at = string.format('%d:%d', at, ticks)
    whole = whole + 1
  end
  redis.call('SET', key, at, 'PX', ttl_ms(whole))
end
-- time
local now, deadline = ARGV[5], ARGV[7]
local stamped = now ~= nil and now ~= ''
if stamped and (deadline == nil or deadline == '') then
  now = tonumber(now)
else
  local time = redis.call('TIME')
  local clock = time[1] * 1000000 + time[2]
  if deadline ~= nil and deadline ~= '' and clock > tonumber(deadline) then
    return redis.error_reply('LATE')
  end
  now = stamped and tonumber(now) or clock
end
local key = KEYS[1]
local limit, window, burst, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if not (limit and window and burst and cost and now) then
  error('bad')
end
local fmod, g, b = math.fmod, window, limit
while b ~= 0 do
  g, b = b, fmod(g, b)
end
local scale, interval = limit / g, window / g
local ahead = 0
local stored = redis.pcall('GET', key)
if type(stored) == 'string' then
  local at, ticks = tonumber(stored), 0
  if not at then
    at, ticks = string.match(stored, '^(-?%d+):(%d+)$')
    at, ticks = tonumber(at), tonumber(ticks)
  end
  if at and at >= now then
    ahead = (at - now) * scale + ticks
    local most = burst * interval
    if ahead > most then
      ahead = most
      save_ahead(key, now, most, scale)
    end
  end
end
local allowed = ahead <= (burst - cost) * interval
if allowed then
  ahead = ahead + cost * interval
  save_ahead(key, now, ahead, scale)
end
local remaining = floor_div(burst * interval - ahead, interval)
if remaining < 0 then
  remaining = 0
end
local retry, retry_ns = 0, 0
if not allowed then
  retry, retry_ns = micros(ahead - (burst - cost) * interval, scale)
end
local reset, reset_ns = micros(ahead, scale)
return { allowed and 1 or 0, remaining, retry, reset, 0, retry_ns, reset_ns, 0 }
