-- === entry point: the stacked script keeps only what is above this line ===

-- What every entry shares, the standalone scripts' and the stacked script's.

local function number(i, name)
  local value = tonumber(ARGV[i])
  if value == nil then
    error('ARGV[' .. i .. '] (' .. name .. ') must be an integer, was "' .. tostring(ARGV[i]) .. '"')
  end
  return value
end

-- The instant of the decision, in microseconds: ARGV[now_index], or Redis TIME when it is "". A call that
-- reaches Redis after ARGV[deadline_index], the Redis TIME at which its caller stopped waiting (Redis was paused
-- or hung meanwhile), takes nothing: the caller has already decided without it. Returns the instant, or nil and
-- the error to answer.
local function decision_time(now_index, deadline_index)
  local now = ARGV[now_index]
  local deadline = ARGV[deadline_index]
  local stamped = now ~= nil and now ~= ''
  if deadline == nil or deadline == '' then
    if stamped then
      return number(now_index, 'now')
    end
    deadline = nil
  else
    deadline = number(deadline_index, 'deadline')
  end
  -- Redis 3.2 to 4 refuse writes after TIME unless the script replicates its effects
  if redis.replicate_commands then
    redis.replicate_commands()
  end
  local time = redis.call('TIME')
  local clock = tonumber(time[1]) * 1000000 + tonumber(time[2])
  if deadline and clock > deadline then
    return nil, redis.error_reply(string.format('LATE the caller stopped waiting at %d, Redis ran the call at %d',
      deadline, clock))
  end
  if stamped then
    return number(now_index, 'now')
  end
  return clock
end
