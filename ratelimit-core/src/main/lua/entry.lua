-- === entry point: the stacked script keeps what is above this line, and the algorithm below the next one

-- The standalone entry: one policy, the calling convention of the header.

local now, late = decision_time(5, 7, 8)
if late then
  return late
end
local key = KEYS[1]
local limit, window = tonumber(ARGV[1]) or invalid(1, 'limit'), read_window(2)
local burst, cost = tonumber(ARGV[3]) or invalid(3, 'burst'), tonumber(ARGV[4]) or invalid(4, 'cost')
local shaping = read_shaping(6)

-- === algorithm
