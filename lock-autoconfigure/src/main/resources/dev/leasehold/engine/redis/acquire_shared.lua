-- Takes a shared (read) lock in one step and returns a fencing token.
-- KEYS[1] lock   KEYS[2] readers   KEYS[3] writer-waiting marker   KEYS[4] fencing counter
-- ARGV[1] token   ARGV[2] lease ms   ARGV[5] 'count' for a plain counter without expiry (quorum mode)
-- Returns {1, fencing token} when granted, {0, ms until the blocker's lease ends} when not.
local holderTtl = redis.call('PTTL', KEYS[1])
if holderTtl ~= -2 then
    -- PTTL is 0 in the holder's last millisecond: "look again in 1 ms", not "no expiry"
    if holderTtl < 0 then
        holderTtl = tonumber(ARGV[2])
    end
    return {0, math.max(1, holderTtl)}
end
local writerWaiting = redis.call('PTTL', KEYS[3])
if writerWaiting ~= -2 then
    if writerWaiting < 0 then
        writerWaiting = tonumber(ARGV[2])
    end
    return {0, math.max(1, writerWaiting)}
end
local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local lease = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', nowMs)
redis.call('ZADD', KEYS[2], nowMs + lease, ARGV[1])
if redis.call('PTTL', KEYS[2]) < lease then
    redis.call('PEXPIRE', KEYS[2], lease)
end
if ARGV[5] == 'count' then
    -- quorum mode: a plain counter that never expires (QuorumLockServer explains why)
    local counted = redis.call('INCR', KEYS[4])
    redis.call('PERSIST', KEYS[4])
    return {1, counted}
end
-- the same fencing rule as the exclusive acquire
local fence = tonumber(time[1]) * 1000000 + tonumber(time[2])
local counterTtl = lease + 60000
local previous = tonumber(redis.call('SET', KEYS[4], string.format('%.0f', fence), 'PX', counterTtl, 'GET') or '0')
if previous >= fence then
    fence = previous + 1
    redis.call('SET', KEYS[4], string.format('%.0f', fence), 'PX', counterTtl)
end
return {1, fence}
