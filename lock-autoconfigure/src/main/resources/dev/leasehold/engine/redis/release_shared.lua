-- Removes this reader; the last reader out wakes the waiting writers.
-- KEYS[1] readers   ARGV[1] token   ARGV[2] wake-up channel
-- Returns 1 when released, 2 when released but Redis refused the wake-up (see release_exclusive.lua),
-- 0 when the token no longer held a read lease.
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then
    return 0
end
local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if redis.call('ZCOUNT', KEYS[1], nowMs, '+inf') == 0 then
    redis.call('DEL', KEYS[1])
    local published = redis.pcall('PUBLISH', ARGV[2], '1')
    if type(published) == 'table' and published['err'] then
        return 2
    end
end
return 1
