-- Whether anyone holds the lock in any mode.
-- KEYS[1] lock   KEYS[2] readers
if redis.call('EXISTS', KEYS[1]) == 1 then
    return 1
end
local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if redis.call('ZCOUNT', KEYS[2], '(' .. nowMs, '+inf') > 0 then
    return 1
end
return 0
