-- === give back
-- counted in the current window while it lasts, then in the previous one; after that it weighs no more
local index = floor_div(now, window)
local taken = floor_div(taken_at, window)
local age, previous, current = load(key, index)
if age == 1 then
  -- written in the previous window: its current count is the previous one now
  age, previous, current = 0, current, 0
end
if age == 0 and (taken == index or taken == index - 1) then
  previous, current = math.min(previous, limit), math.min(current, limit)
  if taken == index then
    current = math.max(current - cost, 0)
  else
    previous = math.max(previous - cost, 0)
  end
  save(key, limit, window, index, now - index * window, previous, current)
end
