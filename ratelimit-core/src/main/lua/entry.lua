
-- The standalone entry: one policy, the calling convention of the header.

local now, late = decision_time(5, 7)
if late then
  return late
end
local s = algorithm.load(KEYS[1], number(1, 'limit'), number(2, 'window'), number(3, 'burst'),
  number(4, 'cost'), tonumber(ARGV[6]) or 0, now)
local allowed = algorithm.admits(s)
if allowed then
  algorithm.take(s)
end
return algorithm.reply(s, allowed)
