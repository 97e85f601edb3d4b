-- Extends this reader's lease only if it is still live.
-- KEYS[1] readers   ARGV[1] token   ARGV[2] lease ms
-- Returns 1 when renewed, 0 when the read lease is gone or already ran out.
local leaseEnd = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not leaseEnd then
    return 0
end
local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if tonumber(leaseEnd) <= nowMs then
    redis.call('ZREM', KEYS[1], ARGV[1])
    return 0
end
local lease = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], 'XX', nowMs + lease, ARGV[1])
if redis.call('PTTL', KEYS[1]) < lease then
    redis.call('PEXPIRE', KEYS[1], lease)
end
return 1
