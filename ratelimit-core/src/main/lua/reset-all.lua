--[[
Reset all: every client back to its full quota under every policy, as reset.lua does for one, for the keys of one
key prefix on the node the call reaches, one SCAN step a call, so that Redis never stays busy with a long scan.

  KEYS[1]  a key in a slot the node serves, which routes the call on a Cluster; neither read nor written
  ARGV[1]  the cursor, "0" to start; or "primaries" to tell the primaries of a Cluster instead
  ARGV[2]  the pattern of the prefix's keys: the prefix, its glob characters escaped, then "{*"
  ARGV[3]  the start of the fleet's keys, which are kept: the prefix, then the fleet's hash tag
  ARGV[4]  how many keys a step looks at (SCAN's COUNT)
Returns: the next cursor, 0 once the scan has gone round the node, then how many states the step deleted; for
"primaries", one slot that each primary serves.

Not runnable as is: the store places what the standalone scripts share and release.lua before it. The marks
beside the states are left to expire; each state deleted is released as reset.lua releases it.
]]

if ARGV[1] == 'primaries' then
  local primaries, seen = {}, {}
  for _, range in ipairs(redis.call('CLUSTER', 'SLOTS')) do
    local primary = range[3]
    -- its id, or before Redis 4 its address
    local id = primary[3] or (primary[1] .. ':' .. primary[2])
    if not seen[id] then
      seen[id] = true
      primaries[#primaries + 1] = range[1]
    end
  end
  return primaries
end

-- Redis 3.2 to 4 refuse writes after SCAN unless the script replicates its effects
if redis.replicate_commands then
  redis.replicate_commands()
end
local step = redis.call('SCAN', ARGV[1], 'MATCH', ARGV[2], 'COUNT', ARGV[4])
local fleet = ARGV[3]
local deleted = 0
for _, key in ipairs(step[2]) do
  local mark = key:sub(-#RELEASED) == RELEASED or key:sub(-#RESTORED) == RESTORED
  if not mark and key:sub(1, #fleet) ~= fleet then
    release(key, redis.call('PTTL', key))
    deleted = deleted + redis.call('DEL', key)
  end
end
return { tonumber(step[1]), deleted }
