-- Quorum mode: raises the fencing counter to at least a token granted elsewhere, so that a majority
-- knows it (see QuorumLockServer). Never lowers it and never gives it an expiry.
-- KEYS[1] fencing counter   ARGV[1] token
-- Returns the counter after the call.
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local target = tonumber(ARGV[1])
if current < target then
    redis.call('SET', KEYS[1], ARGV[1])
    return target
end
return current
