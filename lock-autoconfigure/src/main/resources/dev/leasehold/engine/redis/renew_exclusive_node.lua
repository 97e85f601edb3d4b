-- Extends many exclusive leases on one Cluster node in one call, each only if its token still owns its lock, with
-- the locks in any slots (renew_exclusive_many.lua needs one slot per call: on a Cluster that was a call per lock,
-- since held locks spread over 16,384 slots). Only KEYS[1] is declared: it routes the call to its node. The others
-- come as arguments, which a script without flags may read on the node that serves them (Redis 6 and 7); a lock
-- this node does not serve now (another node's slot, or one in migration whose keys have left) is answered -1,
-- and the client asks again where it lives. A further lock that is absent is answered -2, never 0: while its slot
-- migrates, a call that came with ASKING (its first lock had moved here) reads that slot's keys that have not moved
-- yet as absent, since Redis applies ASKING to every key of the script; the client asks about it on its own,
-- where Redis routes it (MOVED/ASK). (owner.lua is put in front.)
-- KEYS[1] a lock   ARGV[1] lease ms (the same for every lock of the call)   ARGV[2] the token of KEYS[1]
-- ARGV[2i + 1], ARGV[2i + 2] the i-th further lock and its token
-- Returns one number per lock, in order: 1 renewed, 0 gone or owned by someone else, -1 not served here, -2 a
-- further lock absent here (gone, or not moved here yet).
local lease = ARGV[1]

local function renew(key, token, declared)
    local value = redis.pcall('GET', key)
    if type(value) == 'table' and value['err'] then
        return -1 -- Redis refused the key here ("non local key"): it lives elsewhere
    end
    if ownedBy(value, token) then
        redis.call('PEXPIRE', key, lease)
        return 1
    end
    if not value and not declared then
        return -2
    end
    return 0
end

local renewed = {renew(KEYS[1], ARGV[2], true)}
for i = 3, #ARGV, 2 do
    renewed[#renewed + 1] = renew(ARGV[i], ARGV[i + 1], false)
end
return renewed
