-- Deletes the lock only if the token still owns it, and wakes the waiters.
-- KEYS[1] lock   ARGV[1] token   ARGV[2] wake-up channel
-- Returns 1 when released, 0 when the token no longer owned the lock.
if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('DEL', KEYS[1])
    redis.call('PUBLISH', ARGV[2], '1')
    return 1
end
return 0
