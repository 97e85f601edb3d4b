-- Deletes the lock only if the token still owns it, and wakes the waiters.
-- KEYS[1] lock   ARGV[1] token   ARGV[2] wake-up channel   ARGV[3] (optional) hold-at-least ms left
-- Returns 1 when released, 0 when the token no longer owned the lock.
if redis.call('GET', KEYS[1]) == ARGV[1] then
    if tonumber(ARGV[3] or '0') > 0 then
        -- holdAtLeast: the holder is done, but the key stays taken for the time left (no wake-up yet)
        redis.call('PEXPIRE', KEYS[1], ARGV[3])
        return 1
    end
    redis.call('DEL', KEYS[1])
    redis.call('PUBLISH', ARGV[2], '1')
    return 1
end
return 0
