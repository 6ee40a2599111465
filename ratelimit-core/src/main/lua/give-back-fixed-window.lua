-- === give back
-- only while the window it was taken in lasts: a count of a window that has ended counts no more, and
-- taking from the next one would give permits the request never took
local index, until_next, start = window_at(now, window)
if taken_at >= start and taken_at < now + until_next then
  local age, count = load(key, index)
  if age == 0 and count > 0 then
    save(key, limit, math.max(math.min(count, limit) - cost, 0), index, until_next)
  end
end
