-- Removes this reader; the last reader out wakes whoever waits. (fence.lua is put in front.)
-- KEYS[1] readers   KEYS[2] lock   KEYS[3] queue of waiting instances   KEYS[4] their expiries
-- ARGV: as release_exclusive.lua's; a hold-at-least keeps this read lease that long instead of removing it
-- Returns 1 when released, 2 when released but Redis refused the wake-up (see release_exclusive.lua),
-- 0 when the token no longer held a read lease (gone, or its lease ran out).

-- @queue.lua

local holdText, mode = string.match(ARGV[2], '^(%d+) (%a+)$')
local hold = tonumber(holdText)
local settings = queueSettings(ARGV[3])
local nowMs = math.floor(serverMicros() / 1000)
if hold > 0 then
    -- holdAtLeast: this read lease stays for the time left (no wake-up yet)
    local leaseEnd = redis.call('ZSCORE', KEYS[1], ARGV[1])
    if not leaseEnd or tonumber(leaseEnd) <= nowMs then
        return 0
    end
    redis.call('ZADD', KEYS[1], 'XX', nowMs + hold, ARGV[1])
    if redis.call('PTTL', KEYS[1]) < hold then
        redis.call('PEXPIRE', KEYS[1], hold)
    end
    return 1
end
local leaseEnd = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not leaseEnd then
    return 0
end
redis.call('ZREM', KEYS[1], ARGV[1])
-- a read lease that ran out is not released, though nothing removed it yet (the zset lives as long as its longest
-- lease, and a withdrawal may have granted the key to a writer meanwhile): its holder is told; the wake-up still runs
local released = tonumber(leaseEnd) > nowMs and 1 or 0
if redis.call('ZCOUNT', KEYS[1], nowMs, '+inf') > 0 then
    return released
end
redis.call('DEL', KEYS[1])
if mode == 'queued' then
    if redis.call('EXISTS', KEYS[3]) == 0 or redis.call('EXISTS', KEYS[2]) == 1 then
        return released
    end
    local woken = wakeQueueHead(KEYS[2], KEYS[3], KEYS[4], nowMs, ARGV[4], settings.publish, settings.claimMs, false,
        settings.live, settings.entryMs)
    return released * woken
end
local published = redis.pcall(settings.publish, ARGV[4], '1')
if type(published) == 'table' and published['err'] then
    return released * 2
end
return released
