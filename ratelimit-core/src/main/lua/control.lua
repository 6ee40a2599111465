--[[
What the instances of a fleet share besides the clients' states: the runtime changes of policies, which every
instance applies and an instance that starts reads, and how many times a client was reset, so that each
instance drops the denials it keeps locally. Each instance's heartbeat reads both counts (fleet.lua).

  KEYS[1]  the control hash: field "changes" counts the changes shared so far, "resets" the resets, and
           "policy:<name>" holds a changed policy's "<limit> <window in microseconds> <burst>"
  ARGV[1]  "share", then the fleet's channel, the policy's name, limit, window in microseconds and burst:
           shares a change;
           "unshare", then the channel and the policy's name: removes its change, so that its declared values
           apply again;
           "reset", then the channel and the client key: counts one reset;
           "read", then policies' names: reads their changes
A change is announced on the channel as "changes", a reset as "reset:<client key>", so that instances that
subscribe act at once rather than at their next heartbeat.
Returns: the number of changes and of resets; after them, for "read", four integers per name: 1, the limit,
the window and the burst of its change, or four zeros when it has none.
]]

local op = ARGV[1]
if op == 'share' then
  for i = 4, 6 do
    if not string.match(ARGV[i] or '', '^%d+$') then
      error('ARGV[' .. i .. '] must be a whole number, was "' .. tostring(ARGV[i]) .. '"')
    end
  end
  redis.call('HSET', KEYS[1], 'policy:' .. ARGV[3], ARGV[4] .. ' ' .. ARGV[5] .. ' ' .. ARGV[6])
  redis.call('HINCRBY', KEYS[1], 'changes', 1)
  redis.call('PUBLISH', ARGV[2], 'changes')
elseif op == 'unshare' then
  redis.call('HDEL', KEYS[1], 'policy:' .. ARGV[3])
  redis.call('HINCRBY', KEYS[1], 'changes', 1)
  redis.call('PUBLISH', ARGV[2], 'changes')
elseif op == 'reset' then
  redis.call('HINCRBY', KEYS[1], 'resets', 1)
  redis.call('PUBLISH', ARGV[2], 'reset:' .. ARGV[3])
elseif op ~= 'read' then
  error('ARGV[1] must be share, unshare, reset or read, was "' .. tostring(op) .. '"')
end

local counts = redis.call('HMGET', KEYS[1], 'changes', 'resets')
local reply = { tonumber(counts[1]) or 0, tonumber(counts[2]) or 0 }
if op == 'read' then
  for i = 2, #ARGV do
    local change = redis.call('HGET', KEYS[1], 'policy:' .. ARGV[i])
    if change then
      reply[#reply + 1] = 1
      for value in string.gmatch(change, '%d+') do
        reply[#reply + 1] = tonumber(value)
      end
    else
      for _ = 1, 4 do
        reply[#reply + 1] = 0
      end
    end
  end
end
return reply
