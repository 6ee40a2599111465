--[[
Fleet membership: every instance of a store sharing this Redis and key prefix sends a heartbeat about once a
second while Redis answers. The reply tells it how many instances share the quotas, so that while Redis is
away each instance's local fallback enforces its share of every limit, and what Redis' clock reads, so that
the instance can tell Redis when it stops waiting for a call (the deadline of the decision scripts).

  KEYS[1]  the members key: a sorted set of instance ids scored by when each stops counting (ms of TIME)
  KEYS[2]  the control hash of control.lua, in the same slot
  ARGV[1]  this instance's id
  ARGV[2]  how long a member counts after its last heartbeat, in milliseconds
  ARGV[3]  "leave" to remove the instance instead, as it does when it shuts down
Returns: the number of members, Redis TIME as seconds and microseconds, the numbers of changes and of resets
that control.lua counted, so that the instance applies what is new, then when a change was first written to
control.lua's hash (0 when none), so that an instance tells when the changes it knows are gone.
]]

if redis.replicate_commands then
  redis.replicate_commands()
end
local time = redis.call('TIME')
local now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local ttl_ms = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms)
if ARGV[3] == 'leave' then
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], now_ms + ttl_ms, ARGV[1])
end
redis.call('PEXPIRE', KEYS[1], ttl_ms)
local counts = redis.call('HMGET', KEYS[2], 'changes', 'resets', 'since')
return { redis.call('ZCARD', KEYS[1]), tonumber(time[1]), tonumber(time[2]), tonumber(counts[1]) or 0,
  tonumber(counts[2]) or 0, tonumber(counts[3]) or 0 }
