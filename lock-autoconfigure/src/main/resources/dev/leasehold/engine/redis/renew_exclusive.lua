-- Extends the lease only if the token still owns the lock. (owner.lua is put in front.)
-- KEYS[1] lock   ARGV[1] token   ARGV[2] lease ms
-- Returns 1 when renewed, 0 when the lock is gone or owned by someone else.
if ownedBy(redis.call('GET', KEYS[1]), ARGV[1]) then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return 1
end
return 0
