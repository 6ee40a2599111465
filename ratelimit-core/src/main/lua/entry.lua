
-- The standalone entry: one policy, the calling convention of the header.

local now, late = decision_time(5, 7)
if late then
  return late
end
local s = algorithm.load(KEYS[1], tonumber(ARGV[1]) or invalid(1, 'limit'), tonumber(ARGV[2]) or invalid(2, 'window'),
  tonumber(ARGV[3]) or invalid(3, 'burst'), tonumber(ARGV[4]) or invalid(4, 'cost'), delay_after(6), now)
local allowed = algorithm.admits(s)
if allowed then
  algorithm.take(s)
end
return algorithm.reply(s, allowed)
