-- the commands every bucket decision makes, and nothing else: TIME, GET, SET with an expiry
local time = redis.call('TIME')
local now = time[1] * 1000000 + time[2]
redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], now + 10, 'PX', 1000)
return { 1, 0, 0, 0, 0, 0, 0, 0 }
