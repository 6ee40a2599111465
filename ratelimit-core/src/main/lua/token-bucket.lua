
--[[
Token bucket: a bucket of `burst` tokens, refilled at `limit` tokens per `window`, starting full. A request
takes `cost` tokens if the bucket holds that many.

State: the instant at which the bucket is full again, as the bucket algorithms keep their instant (ticks.lua).
The tokens at `now` are burst - (full - now) / interval, so one number is all a bucket needs, and the
decisions are exactly those of GCRA (TAT = full again).
]]
