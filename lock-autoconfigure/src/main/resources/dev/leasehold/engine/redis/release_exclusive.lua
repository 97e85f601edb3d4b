-- Deletes the lock only if the token still owns it, and wakes the waiters.
-- KEYS[1] lock   ARGV[1] token   ARGV[2] wake-up channel
-- ARGV[3] 'sharded' on a Redis 7+ Cluster: wake waiters with SPUBLISH (stays on the slot's node, no
--         broadcast over the whole cluster bus); anything else: PUBLISH
-- Returns 1 when released, 2 when released but Redis refused the wake-up (an ACL user without rights on
-- the channel: waiters elsewhere then wake at their re-check), 0 when the token no longer owned the lock.
local publishCommand = (ARGV[3] == 'sharded' and redis.REDIS_VERSION_NUM and redis.REDIS_VERSION_NUM >= 0x070000)
    and 'SPUBLISH' or 'PUBLISH'
if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('DEL', KEYS[1])
    -- pcall: a refused PUBLISH must not turn a done release into an error
    local published = redis.pcall(publishCommand, ARGV[2], '1')
    if type(published) == 'table' and published['err'] then
        return 2
    end
    return 1
end
return 0
