-- The fencing rule, put in front of every script that grants (LockScript), after owner.lua: kept apart from
-- queue.lua so that the uncontended path of an acquire does not pay for defining the queue's functions.

-- asked once per script run (a script is atomic: later calls would differ by microseconds and cost a TIME each)
local askedMicros
local function serverMicros()
    if not askedMicros then
        local time = redis.call('TIME')
        askedMicros = tonumber(time[1]) * 1000000 + tonumber(time[2])
    end
    return askedMicros
end

-- Clock rule: a token is never below the server clock in µs, and above the counter key's value when one exists
-- (tokens handed out ahead of the clock). Tokens never run more than a block (at most 1000 µs, FairQueue) ahead of
-- the clock, however busy the key, so a counter lost with a restart (which takes longer than that) cannot make
-- them go back; and a counter key lives as long as it is ahead of the clock, plus retainMs. nowMicros: the clock
-- the counter is ahead of (the server's; in quorum mode the client's).
local function counterWrite(fenceKey, last, nowMicros, retainMs)
    local aheadMs = math.max(0, math.ceil((last - nowMicros) / 1000))
    redis.call('SET', fenceKey, string.format('%.0f', last), 'PX', retainMs + aheadMs)
end

-- The fencing rule a script was given: 'clock' (one server), 'count' (quorum mode, a counter that never
-- expires) or 'count:<retention ms>:<client clock µs>' (quorum mode with leasehold.quorum.fence-retention: the
-- counter expires that long after its last write, and no token is below the client's clock, so a counter that
-- expired restarts above every earlier token as long as the clients' clocks differ by less than the retention).
local function fenceRule(text)
    if text == 'count' then
        return {counting = true, retainMs = 0, floor = 0}
    end
    local retainMs, floor = string.match(text or '', '^count:(%d+):(%d+)$')
    if retainMs then
        return {counting = true, retainMs = tonumber(retainMs), floor = tonumber(floor)}
    end
    return nil
end

-- quorum mode: the node's counter moves on by a block; with a retention, never below the client's clock, and
-- it expires that long after this write
local function countFence(fenceKey, blockSize, rule)
    if rule.retainMs == 0 then
        local counted = redis.call('INCRBY', fenceKey, blockSize)
        redis.call('PERSIST', fenceKey)
        return {1, counted - blockSize + 1, counted}
    end
    local first = math.max(tonumber(redis.call('GET', fenceKey) or '0') + 1, rule.floor)
    local last = first + blockSize - 1
    -- blocks may run the counter ahead of the clients' clocks (a busy key): it expires that long after
    -- the retention, so the next token after an expiry is still above it
    counterWrite(fenceKey, last, rule.floor, rule.retainMs)
    return {1, first, last}
end

-- The fencing token of a grant, and the block of tokens reserved behind it for hand-offs inside the
-- holder's JVM ({1, first, last}). An exclusive grant records the block's end in the lock's value
-- (owner.lua), so the counter key is written only when the block reaches beyond the lease (the key could
-- expire before the clock passes it); a shared grant (keepsCounter) has no value of its own and writes it.
-- rule: fenceRule's answer (nil: the clock rule). above: a token the grant must be above besides the counter
-- key (the holder's previous block), or nil; counterAbsent: the caller has just seen that there is no counter
-- key (the uncontended path), so no GET.
local function grantFence(fenceKey, lease, blockSize, rule, keepsCounter, above, counterAbsent)
    if rule then
        return countFence(fenceKey, blockSize, rule)
    end
    local now = serverMicros()
    local fence = math.max(now, (above or 0) + 1)
    if not counterAbsent then
        fence = math.max(fence, tonumber(redis.call('GET', fenceKey) or '0') + 1)
    end
    -- the block ends at most a block ahead of the clock (the fence itself may be the only token left to it
    -- when the key changes hands faster than the clock moves a block): tokens never outrun the clock
    local last = math.max(fence, now + blockSize - 1)
    if keepsCounter or last >= now + lease * 1000 - 1000 then
        counterWrite(fenceKey, last, now, lease + 60000)
    end
    return {1, fence, last}
end

-- At a release (or a take-back) of an exclusive lock: when its tokens reach the clock, the counter key keeps
-- the next grant above them (otherwise the next grant's clock is above them anyway).
local function keepFenceAfterRelease(fenceKey, last, nowMicros, keepMs)
    if last >= nowMicros then
        counterWrite(fenceKey, math.max(last, tonumber(redis.call('GET', fenceKey) or '0')), nowMicros, keepMs + 60000)
    end
end
