
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
