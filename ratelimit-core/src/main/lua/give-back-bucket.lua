-- === give back
-- the instant moves back by the cost, never before now: a bucket cannot hold more than it refills. The
-- bound is the leaky bucket's, one interval above the others': a bound too high only ever keeps more.
local scale, interval, ahead = bucket_state(key, limit, window, now, burst + 1)
if ahead > 0 then
  ahead = ahead - cost * interval
  if ahead > 0 then
    save_ahead(key, now, ahead, scale)
  else
    redis.call('DEL', key)
  end
end
