
-- What every entry shares, the standalone scripts' and the stacked script's.

-- Fails on an argument that must be an integer; read as tonumber(ARGV[i]) or invalid(i, name), which calls no
-- function for a good one.
local function invalid(i, name)
  error('ARGV[' .. i .. '] (' .. name .. ') must be an integer, was "' .. tostring(ARGV[i]) .. '"')
end

-- The queued requests that pass without waiting: "" is 0.
local function read_delay_after(i)
  local value = ARGV[i]
  if value == nil or value == '' then
    return 0
  end
  return tonumber(value) or invalid(i, 'delay after')
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
      return tonumber(now) or invalid(now_index, 'now')
    end
    deadline = nil
  else
    deadline = tonumber(deadline) or invalid(deadline_index, 'deadline')
  end
  -- Redis 3.2 to 4 refuse writes after TIME unless the script replicates its effects
  if redis.replicate_commands then
    redis.replicate_commands()
  end
  local time = redis.call('TIME')
  -- arithmetic reads the digits without calling tonumber
  local clock = time[1] * 1000000 + time[2]
  if deadline and clock > deadline then
    return nil, redis.error_reply(string.format('LATE the caller stopped waiting at %d, Redis ran the call at %d',
      deadline, clock))
  end
  if stamped then
    return tonumber(now) or invalid(now_index, 'now')
  end
  return clock
end
