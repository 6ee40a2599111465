--[[
Reset: a client back to its full quota under one policy, as if never seen.

  KEYS     the client's state keys under the policy and under the policies it changed from, whose permits
           would otherwise be carried over again; all of one client, so one slot in a cluster
Returns: one integer, how many of the keys existed.
]]

return { redis.call('DEL', unpack(KEYS)) }
