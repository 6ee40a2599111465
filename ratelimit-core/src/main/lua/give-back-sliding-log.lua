-- === give back
-- the request's own entries while they are in the window: dropping the newest instead would free a permit
-- before its time. Entries of one instant are alike, so any of them will do; a key of another type holds
-- none.
if taken_at > now - window then
  redis.pcall('LREM', key, cost, taken_at)
end
