
-- The window algorithms (fixed window, sliding window counter) pack their state with the index of the
-- window it was written in, modulo PACK: how many window indexes the packed state tells apart.
local PACK = 2097152

local function packed_index(index)
  return index - floor_div(index, PACK) * PACK
end

-- How many windows ago a state packed with `stored` was written, negative for a window after this one:
-- modulo PACK, the upper half reads as ahead, since no key lives PACK / 2 windows.
local function age_of(index, stored)
  local age = packed_index(index - stored)
  if age >= PACK / 2 then
    return age - PACK
  end
  return age
end

-- The window of `now`: its index, how long until the next one starts, and its start. Windows are aligned to
-- multiples of `window` since the clock's zero, or are the periods of a calendar window (read_window).
local function window_at(now, window)
  if type(window) == 'number' then
    local index = floor_div(now, window)
    return index, (index + 1) * window - now, index * window
  end
  for i = 3, #window do
    if now < window[i] then
      if now >= window[i - 1] then
        return window[1] + i - 3, window[i] - now, window[i - 1]
      end
      break
    end
  end
  error('CALENDAR the instant ' .. now .. ' is in none of the periods from ' .. window[2] .. ' to ' ..
    window[#window] .. ': the clock of the caller is more than a period off that of Redis')
end

-- Reads a window algorithm's state: how many windows before `index` it was written, negative for a window
-- after it, then its counts, as the integer packed above the index or as the text after "<window index>:"
-- of the string form; nil when the key holds neither (a key of another type, as when the policy changed its
-- algorithm).
local function load_window(key, index)
  local stored = redis.pcall('GET', key)
  if type(stored) ~= 'string' then
    return nil
  end
  local value = tonumber(stored)
  if value then
    local counts = floor_div(value, PACK)
    return age_of(index, value - counts * PACK), counts
  end
  local stored_index, counts = string.match(stored, '^(-?%d+):(.+)$')
  if stored_index then
    return index - tonumber(stored_index), counts
  end
  return nil
end
