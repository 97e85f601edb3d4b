-- The first try of an exclusive lock on a key this client has seen no contention on, with only the keys and
-- arguments its uncontended path reads: each key and argument of a script call costs Redis about 1,200
-- instructions, and acquire_exclusive.lua takes 14. Grants exactly as that script's uncontended path does (the
-- clock rule, a quiet value, owner.lua); anything else answers {-1} and writes nothing, and the client sends
-- acquire_exclusive.lua (ScriptedLockServer).
-- KEYS[1] lock   KEYS[2] readers   KEYS[3] writer-waiting marker   KEYS[4] queue   KEYS[5] fencing counter
-- ARGV[1] owner token   ARGV[2] lease ms (2 or more)   ARGV[3] fencing tokens to reserve for hand-offs (1 to 999)
-- Returns {1, fencing token, last reserved token} when granted, {-1} when the key is not free of all five.
if redis.call('EXISTS', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]) ~= 0 then
    return {-1}
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local last = now + tonumber(ARGV[3]) - 1
redis.call('SET', KEYS[1], ARGV[1] .. '#' .. string.format('%d', last), 'PX', ARGV[2])
return {1, now, last}
