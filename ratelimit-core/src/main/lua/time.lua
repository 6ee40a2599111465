
-- What every entry shares, the standalone scripts' and the stacked script's.

-- Fails on an argument that must be an integer; read as tonumber(ARGV[i]) or invalid(i, name), which calls no
-- function for a good one.
local function invalid(i, name)
  error('ARGV[' .. i .. '] (' .. name .. ') must be an integer, was "' .. tostring(ARGV[i]) .. '"')
end

-- The queued requests that pass without waiting: "" is 0.
local function read_shaping(i)
  local value = ARGV[i]
  if value == nil or value == '' then
    return 0
  end
  return tonumber(value) or invalid(i, 'shaping')
end

-- A window: microseconds, or a calendar window's "<period>:<start>:<end>:...", the number of the period that
-- starts at <start> and the boundaries of that period and of those after it in microseconds, which the caller
-- computes since Lua knows no time zones, read as a table of the number then the boundaries. Only the fixed
-- window takes one.
local function read_window(i)
  local value = ARGV[i]
  local window = tonumber(value)
  if window then
    return window
  end
  if type(value) == 'string' and string.find(value, '^%-?%d+:%-?%d+:%-?%d+') then
    local periods = {}
    for number in string.gmatch(value, '%-?%d+') do
      periods[#periods + 1] = tonumber(number)
    end
    return periods
  end
  return invalid(i, 'window')
end

-- Suffixes of the marks beside a state key, in its slot: a state deleted on purpose (a reset, a give-back that
-- left it full, a carry-over) is marked released for as long as it would have lived (release.lua); a state that
-- Redis had lost and a caller restored is marked restored for a short while (stacked.lua). A client under a
-- policy's penalty has a mark holding the instant, in microseconds, until which it is refused (stacked.lua).
local RELEASED, RESTORED, PENALTY = '!released', '!restored', '!penalty'

-- The instant of the decision, in microseconds: ARGV[now_index], or Redis TIME when it is "". A call that
-- reaches Redis after ARGV[deadline_index], the Redis TIME at which its caller stopped waiting (Redis was paused
-- or hung meanwhile), takes nothing: the caller has already decided without it.
-- A call whose ARGV[expect_index] has a "1" or "2" at position i expects KEYS[i] to hold a state, as Redis last
-- told its caller. If Redis has lost it (an empty restart, a flush, an eviction, a failover to a replica that
-- missed it) rather than released it, the call takes nothing and fails with an error starting "LOST" that
-- names the keys, so that the caller first tells Redis what it last heard. So does a "1" for a state that
-- another caller restored a moment ago, so that each caller that knew it tells what it heard; a "2" is a
-- caller that has told already. Returns the instant, or nil and the error to answer.
local function decision_time(now_index, deadline_index, expect_index)
  local expect = expect_index and ARGV[expect_index]
  if expect and expect ~= '' then
    local lost = ''
    for i = 1, #expect do
      local byte = string.byte(expect, i)
      if byte ~= 48 then
        local key = KEYS[i]
        -- one call where the state is there: it counts twice, so 2 alone, 3 if restored a moment ago, and 0
        -- or 1 (the mark alone) when it is gone
        local found = redis.call('EXISTS', key, key, key .. RESTORED)
        if (found < 2 and redis.call('EXISTS', key .. RELEASED) == 0) or (found == 3 and byte == 49) then
          lost = lost .. ' ' .. i
        end
      end
    end
    if lost ~= '' then
      return nil, redis.error_reply('LOST the states of keys' .. lost .. ' are gone')
    end
  end
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
