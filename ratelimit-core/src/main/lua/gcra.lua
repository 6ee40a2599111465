
--[[
GCRA, the generic cell rate algorithm: every request moves a theoretical arrival time (TAT) one emission
interval T = window / limit into the future; a request is refused while TAT - now would exceed the
tolerance tau = T * (burst - cost), so `burst` requests may arrive at once and then one per T.

State: the TAT, as the bucket algorithms keep their instant (ticks.lua). The decisions are exactly those of
the token bucket, whose "bucket full again" instant is the TAT: both run bucket.lua.
]]
