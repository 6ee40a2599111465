--[[
Reset: a client back to its full quota under one policy, as if never seen, and no longer under a penalty.

  KEYS     the client's state keys under the policy and under the policies it changed from, whose permits
           would otherwise be carried over again; all of one client, so one slot in a cluster
Returns: one integer, how many of the keys existed.

Not runnable as is: the store places what the standalone scripts share and release.lua before it. Each key is
released for as long as the longest of them would have lived, so that an instance that still expects a state
does not restore it (time.lua).
]]

local ttl = 0
for _, key in ipairs(KEYS) do
  ttl = math.max(ttl, redis.call('PTTL', key))
end
for _, key in ipairs(KEYS) do
  release(key, ttl)
  -- a reset lifts a penalty too
  redis.call('DEL', key .. PENALTY)
end
return { redis.call('DEL', unpack(KEYS)) }
