-- Reserves the next block of fencing tokens for hand-offs inside the holder's JVM, and renews its lease,
-- only if the token still owns the lock. (owner.lua and fence.lua are put in front; none of queue.lua's functions.)
-- KEYS[1] lock   KEYS[2] fencing counter   KEYS[3] queue of waiting instances
-- ARGV[1] token   ARGV[2] lease ms   ARGV[3] block size   ARGV[4] fencing rule (fence.lua's fenceRule)
-- Returns {1, first token, last token, 1 when other instances queue for the key else 0}, or {0} when the
-- token no longer owns the lock.

local last, quiet = ownersLastFence(redis.call('GET', KEYS[1]), ARGV[1])
if not last then
    return {0}
end
local lease = tonumber(ARGV[2])
-- the new block starts above the holder's previous one, recorded in the value: above the counter key too, which no
-- script writes past a holder's last token while it holds (a grant starts above the counter, and a block that
-- reaches past the lease is written to both); only a bare value (an earlier version's, last 0) needs the counter read
local grant = grantFence(KEYS[2], lease, tonumber(ARGV[3]), fenceRule(ARGV[4]), false, last, last > 0)
-- a quiet grant stays quiet (nobody queued since it was granted: no queue to look at, here or at its release)
redis.call('SET', KEYS[1], lockValue(ARGV[1], grant[3], quiet), 'PX', lease)
local othersQueued = 0
if not quiet then
    -- whether anyone is queued, not whether the head is alive or its entry expired: such a head only ends this turn
    -- early, and the release that ends it drops the head (queue.lua's wakeQueueHead prunes, and passes over a head
    -- whose instance is gone)
    othersQueued = redis.call('EXISTS', KEYS[3])
end
return {1, grant[2], grant[3], othersQueued}
