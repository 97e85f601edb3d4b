-- Deletes the lock only if the token still owns it, and wakes whoever waits. (owner.lua and fence.lua are put
-- where the script says so, after the usual release of a quiet grant.)
-- KEYS[1] lock   KEYS[2] queue of waiting instances   KEYS[3] their expiries   KEYS[4] fencing counter
-- ARGV[1] token
-- ARGV[2] '<hold-at-least ms left: the key stays taken that long instead of being deleted (0: none)> <queued:
--         waiters queue (the key goes straight to the queue's head, and a release with nobody queued publishes
--         nothing) | broadcast (quorum mode): every release is published on ARGV[4]>'
-- ARGV[3] the queue's settings (queue.lua's queueSettings): entry lifetime, how long a queue head has to claim
--         the key granted to it, refresh, 'sharded' on a Redis 7+ Cluster (wake waiters with SPUBLISH: it stays
--         on the slot's node, no broadcast over the whole cluster bus) or 'plain' (PUBLISH), liveness prefix
-- ARGV[4] wake-up channel (queued waiters: '<channel>:<waiter id>')
-- Returns 1 when released, 2 when released but Redis refused the wake-up (an ACL user without rights on
-- the channel: waiters elsewhere then wake at their re-check), 0 when the token no longer owned the lock.
local value = redis.call('GET', KEYS[1])
-- a quiet grant's release (nobody queued, owner.lua) with no hold left and its tokens behind the clock, before a
-- function is defined (see acquire_exclusive.lua)
if value and ARGV[2] == '0 queued' and string.byte(value, #ARGV[1] + 1) == 35
        and string.find(value, ARGV[1], 1, true) == 1 then
    -- the clock has passed the last token: seconds, then µs (tonumber of all 16 digits at once, through libc's
    -- multi-precision strtod, was most of this path's cost)
    local last = string.sub(value, #ARGV[1] + 2)
    local time = redis.call('TIME')
    local lastSeconds = string.sub(last, 1, -7)
    local passed
    if lastSeconds == time[1] then
        passed = tonumber(string.sub(last, -6)) < tonumber(time[2])
    else
        passed = #last > 6 and tonumber(lastSeconds) < tonumber(time[1])
    end
    if passed then
        redis.call('DEL', KEYS[1])
        return 1
    end
end

-- a quorum node's release with no hold left (owner.lua's rule of ownership, spelled out): delete the key if the
-- token owns it and wake everyone listening, before any function is defined; PUBLISH only ('plain', as a quorum node
-- is one server: the general path below decides SPUBLISH)
if ARGV[2] == '0 broadcast' and string.match(ARGV[3], '^%d+ %d+ %d+ (%a+)') == 'plain' then
    local length = #ARGV[1]
    if not value or string.sub(value, 1, length) ~= ARGV[1] then
        return 0
    end
    local separator = string.byte(value, length + 1)
    if separator and not ((separator == 64 or separator == 35) and tonumber(string.sub(value, length + 2))) then
        return 0
    end
    redis.call('DEL', KEYS[1])
    local published = redis.pcall('PUBLISH', ARGV[4], '1')
    if type(published) == 'table' and published['err'] then
        return 2
    end
    return 1
end

-- @owner.lua and fence.lua

local last, quiet = ownersLastFence(value, ARGV[1])
local keepText, releaseMode = string.match(ARGV[2], '^(%d+) (%a+)$')
local keepMs = tonumber(keepText)
local queuedMode = releaseMode == 'queued'
local nowMicros
-- the lease ran out before this release (a holder that finished late): nothing released the key, so the queue's
-- head may sleep on the lease it last saw, up to its refresh, beside a free key: it is told to look again below
local ranOut = false
if not last then
    if value or not queuedMode or redis.call('EXISTS', KEYS[2]) == 0 then
        return 0
    end
    ranOut = true
else
    -- a quiet grant (owner.lua): nobody queued since it was granted (a try that queues makes the value noisy)
    quiet = quiet and queuedMode
    if queuedMode and last > 0 then
        -- one server (clock rule); a quorum node's counter key already holds every token it handed out, so it
        -- needs no clock here
        nowMicros = serverMicros()
        keepFenceAfterRelease(KEYS[4], last, nowMicros, keepMs)
    end
    if keepMs > 0 then
        -- holdAtLeast: the holder is done, but the key stays taken for the time left, in a value no token owns: a
        -- renewal sent before the release and run after it cannot put the whole lease back
        redis.call('SET', KEYS[1], releasedValue(value), 'PX', keepMs)
    elseif not queuedMode or quiet then
        redis.call('DEL', KEYS[1])
    end
    if quiet then
        return 1 -- nobody queued since the grant: nothing to publish
    end
    -- (a noisy value's queue is read at once, no EXISTS first: someone queued since the grant, and usually still does)
end

-- @queue.lua

local settings = queueSettings(ARGV[3])
if ranOut then
    -- only told to look again (readers, which this script does not see, may hold the key now); still "not owned"
    wakeQueueHead(KEYS[1], KEYS[2], KEYS[3], math.floor(serverMicros() / 1000), ARGV[4], settings.publish,
        settings.claimMs, true, settings.live, settings.entryMs)
    return 0
end
if queuedMode then
    -- with a hold left, the head is only told to look again: its last try saw the whole lease, so it would sleep
    -- past the hold's end (up to its refresh); the next try sees the hold's end and sleeps exactly until then
    local woken, granted = wakeQueueHead(KEYS[1], KEYS[2], KEYS[3], math.floor((nowMicros or serverMicros()) / 1000),
        ARGV[4], settings.publish, settings.claimMs, keepMs > 0, settings.live, settings.entryMs, last)
    if not granted and keepMs == 0 then
        redis.call('DEL', KEYS[1]) -- not granted to a head (whose grant replaced the value): free
    end
    return woken
end
-- pcall: a refused PUBLISH must not turn a done release into an error
local published = redis.pcall(settings.publish, ARGV[4], '1')
if type(published) == 'table' and published['err'] then
    return 2
end
return 1
