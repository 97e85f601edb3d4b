-- Deletes the lock only if the token still owns it, and wakes the waiters.
-- KEYS[1] lock   ARGV[1] token   ARGV[2] wake-up channel
-- Returns 1 when released, 2 when released but Redis refused the wake-up (an ACL user without rights on
-- the channel: waiters elsewhere then wake at their re-check), 0 when the token no longer owned the lock.
if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('DEL', KEYS[1])
    -- pcall: a refused PUBLISH must not turn a done release into an error
    local published = redis.pcall('PUBLISH', ARGV[2], '1')
    if type(published) == 'table' and published['err'] then
        return 2
    end
    return 1
end
return 0
