--[[
What the instances of a fleet share besides the clients' states: the runtime changes of policies, which every
instance applies and an instance that starts reads, and how many times a client was reset, so that each
instance drops the denials it keeps locally. Each instance's heartbeat reads both counts (fleet.lua).

  KEYS[1]  the control hash: field "changes" counts the changes shared so far, "resets" the resets,
           "policy:<name>" holds a changed policy's "<limit> <window in microseconds> <burst>", "since" when
           a change was first written to it (Redis TIME, microseconds) and "restored" the "since" of the hash
           it was restored from, if it was
  ARGV[1]  "share", then the fleet's channel, the "since" of the hash whose changes the caller knows ("0" if
           none), the policy's name, limit, window in microseconds and burst: shares a change;
           "unshare", then the channel, that "since" and the policy's name: removes its change, so that its
           declared values apply again;
           "restore", then the channel, that "since", and a name, limit, window and burst per change: writes
           back the changes the caller knows when the hash it knew is gone (an empty restart, a flush, an
           eviction, a failover to a replica that missed it) and nobody restored it yet, or adds those missing
           when another instance restored it first; a hash that a change by an instance that knew none
           created instead is left as it is;
           "reset", then the channel and the client key: counts one reset;
           "read", then policies' names: reads their changes
A change is announced on the channel as "changes", a reset as "reset:<client key>", so that instances that
subscribe act at once rather than at their next heartbeat. A share or unshare by a caller that knew a hash that
is gone fails with "LOST", so that the caller restores the changes it knows before it changes one.
Returns: the number of changes and of resets and the hash's "since" (0 when none); after them, for "read", four
integers per name: 1, the limit, the window and the burst of its change, or four zeros when it has none; for
"restore", how many changes it wrote (-1 when newer changes replaced the hash the caller knew).
]]

local function whole(i)
  if not string.match(ARGV[i] or '', '^%d+$') then
    error('ARGV[' .. i .. '] must be a whole number, was "' .. tostring(ARGV[i]) .. '"')
  end
  return ARGV[i]
end

local function created()
  if redis.call('HEXISTS', KEYS[1], 'since') == 0 then
    if redis.replicate_commands then
      redis.replicate_commands()
    end
    local time = redis.call('TIME')
    redis.call('HSET', KEYS[1], 'since', time[1] .. string.format('%06d', tonumber(time[2])))
    return true
  end
  return false
end

local op = ARGV[1]
local restored = 0
if op == 'share' or op == 'unshare' then
  local known = whole(3)
  if known ~= '0' and redis.call('HEXISTS', KEYS[1], 'since') == 0 then
    return redis.error_reply('LOST the shared changes are gone from Redis')
  end
  created()
  if op == 'share' then
    redis.call('HSET', KEYS[1], 'policy:' .. ARGV[4], whole(5) .. ' ' .. whole(6) .. ' ' .. whole(7))
  else
    redis.call('HDEL', KEYS[1], 'policy:' .. ARGV[4])
  end
  redis.call('HINCRBY', KEYS[1], 'changes', 1)
  redis.call('PUBLISH', ARGV[2], 'changes')
elseif op == 'restore' then
  local known = whole(3)
  local fresh = created()
  if fresh then
    redis.call('HSET', KEYS[1], 'restored', known)
  end
  if not fresh and redis.call('HEXISTS', KEYS[1], 'restored') == 0 then
    restored = -1
  else
    for i = 4, #ARGV, 4 do
      restored = restored + redis.call('HSETNX', KEYS[1], 'policy:' .. ARGV[i],
        whole(i + 1) .. ' ' .. whole(i + 2) .. ' ' .. whole(i + 3))
    end
    if restored > 0 then
      redis.call('HINCRBY', KEYS[1], 'changes', 1)
      redis.call('PUBLISH', ARGV[2], 'changes')
    end
  end
elseif op == 'reset' then
  redis.call('HINCRBY', KEYS[1], 'resets', 1)
  redis.call('PUBLISH', ARGV[2], 'reset:' .. ARGV[3])
elseif op ~= 'read' then
  error('ARGV[1] must be share, unshare, restore, reset or read, was "' .. tostring(op) .. '"')
end

local counts = redis.call('HMGET', KEYS[1], 'changes', 'resets', 'since')
local reply = { tonumber(counts[1]) or 0, tonumber(counts[2]) or 0, tonumber(counts[3]) or 0 }
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
elseif op == 'restore' then
  reply[4] = restored
end
return reply
