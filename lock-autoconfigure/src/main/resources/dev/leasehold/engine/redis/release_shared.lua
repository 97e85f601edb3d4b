-- Removes this reader; the last reader out wakes the waiting writers.
-- KEYS[1] readers   ARGV[1] token   ARGV[2] wake-up channel   ARGV[3] (optional) hold-at-least ms left
-- Returns 1 when released, 0 when the token no longer held a read lease.
local hold = tonumber(ARGV[3] or '0')
if hold > 0 then
    -- holdAtLeast: this read lease stays for the time left (no wake-up yet)
    local leaseEnd = redis.call('ZSCORE', KEYS[1], ARGV[1])
    local now = redis.call('TIME')
    local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
    if not leaseEnd or tonumber(leaseEnd) <= nowMs then
        return 0
    end
    redis.call('ZADD', KEYS[1], 'XX', nowMs + hold, ARGV[1])
    if redis.call('PTTL', KEYS[1]) < hold then
        redis.call('PEXPIRE', KEYS[1], hold)
    end
    return 1
end
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then
    return 0
end
local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if redis.call('ZCOUNT', KEYS[1], nowMs, '+inf') == 0 then
    redis.call('DEL', KEYS[1])
    redis.call('PUBLISH', ARGV[2], '1')
end
return 1
