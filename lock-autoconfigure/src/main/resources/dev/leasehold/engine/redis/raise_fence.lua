-- Quorum mode: raises the fencing counter to at least a token granted elsewhere, so that a majority
-- knows it (see QuorumLockServer). Never lowers it; no expiry, or the retention's when one is set.
-- KEYS[1] fencing counter   ARGV[1] token   ARGV[2] retention ms (0: the counter never expires)
-- ARGV[3] the client's clock in µs (with a retention): the counter expires the retention after that clock has
--         passed it, not before (blocks can run it ahead of the clocks; fence.lua's counterWrite)
-- Returns the counter after the call.
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local target = tonumber(ARGV[1])
local retainMs = tonumber(ARGV[2] or '0')
local clientMicros = tonumber(ARGV[3] or '0')

local function retention(counter)
    return retainMs + math.max(0, math.ceil((counter - clientMicros) / 1000))
end

if current < target then
    if retainMs > 0 then
        redis.call('SET', KEYS[1], ARGV[1], 'PX', retention(target))
    else
        redis.call('SET', KEYS[1], ARGV[1])
    end
    return target
end
if retainMs > 0 then
    redis.call('PEXPIRE', KEYS[1], retention(current))
end
return current
