-- The fencing rule, put in front of every script that grants (LockScript): kept apart from queue.lua so that
-- the uncontended path of an acquire does not pay for defining the queue's functions.

local function serverMicros()
    local time = redis.call('TIME')
    return tonumber(time[1]) * 1000000 + tonumber(time[2])
end

-- The fencing token of a grant, and the block of tokens reserved behind it for hand-offs inside the
-- holder's JVM: the counter is set to the block's end, so the next grant anywhere is above the block.
-- Clock rule: never below the server clock in µs, so a lost counter cannot make tokens go back (as long
-- as a block is smaller than the time a restart takes, which is true by many orders of magnitude).
local function grantFence(fenceKey, lease, blockSize, countRule)
    if countRule then
        -- quorum mode: a plain counter that never expires (QuorumLockServer explains why)
        local counted = redis.call('INCRBY', fenceKey, blockSize)
        redis.call('PERSIST', fenceKey)
        return {1, counted - blockSize + 1, counted}
    end
    local fence = serverMicros()
    local counterTtl = lease + 60000
    local last = fence + blockSize - 1
    local previous = tonumber(redis.call('SET', fenceKey, string.format('%.0f', last), 'PX', counterTtl, 'GET') or '0')
    if previous >= fence then
        -- more than one grant in a block's time: count on from the previous block
        fence = previous + 1
        last = fence + blockSize - 1
        redis.call('SET', fenceKey, string.format('%.0f', last), 'PX', counterTtl)
    end
    return {1, fence, last}
end
