-- Extends many exclusive leases in one call, each only if its token still owns its lock (renew_exclusive.lua
-- per key; owner.lua is put in front). All keys share one Cluster slot when the server is a Cluster (the caller groups them so).
-- KEYS[i] lock i   ARGV[1] lease ms (the same for every lock of the call)   ARGV[i + 1] token of lock i
-- Returns one number per key, in order: 1 when renewed, 0 when the lock is gone or owned by someone else.
local lease = ARGV[1]
local renewed = {}
for i, key in ipairs(KEYS) do
    if ownedBy(redis.call('GET', key), ARGV[i + 1]) then
        redis.call('PEXPIRE', key, lease)
        renewed[i] = 1
    else
        renewed[i] = 0
    end
end
return renewed
