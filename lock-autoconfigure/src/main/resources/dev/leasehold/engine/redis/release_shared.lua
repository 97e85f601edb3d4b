-- Removes this reader; the last reader out wakes the waiting writers.
-- KEYS[1] readers   ARGV[1] token   ARGV[2] wake-up channel
-- ARGV[3] 'sharded' on a Redis 7+ Cluster: wake waiters with SPUBLISH (stays on the slot's node, no
--         broadcast over the whole cluster bus); anything else: PUBLISH
-- ARGV[4] (optional) hold-at-least ms left: this read lease stays that long instead of being removed
-- Returns 1 when released, 2 when released but Redis refused the wake-up (see release_exclusive.lua),
-- 0 when the token no longer held a read lease.
local publishCommand = (ARGV[3] == 'sharded' and redis.REDIS_VERSION_NUM and redis.REDIS_VERSION_NUM >= 0x070000)
    and 'SPUBLISH' or 'PUBLISH'
local hold = tonumber(ARGV[4] or '0')
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
    local published = redis.pcall(publishCommand, ARGV[2], '1')
    if type(published) == 'table' and published['err'] then
        return 2
    end
end
return 1
