-- === give back
-- the instant moves back by the cost less the time since the request was taken, never before now: a
-- request taken later on a bucket that would have been full without this one started from now, not from
-- the instant, so giving the whole cost back then would leave the bucket fuller than if this request had
-- never been taken; the time since bounds how much such requests absorbed. The bound is the leaky
-- bucket's, one interval above the others': a bound too high only ever keeps more.
local scale, interval, ahead, reserved = bucket_state(key, limit, window, now, burst + 1)
local returned = cost * interval - (now - taken_at) * scale
if ahead > 0 and returned > 0 then
  ahead = ahead - returned
  if ahead > 0 then
    save_ahead(key, now, ahead, scale, reserved and ahead > burst * interval)
  else
    redis.call('DEL', key)
  end
end
