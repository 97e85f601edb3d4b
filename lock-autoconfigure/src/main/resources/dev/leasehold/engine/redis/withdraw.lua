-- A waiter that stops waiting without the lock takes back what it left (only its own), so nobody is
-- kept waiting for it: its writer-waiting marker, its queue entries, and a grant made to it that it did
-- not claim; whoever waits next is woken. (fence.lua is put in front.)
-- KEYS[1] writer-waiting marker   KEYS[2] lock   KEYS[3] readers   KEYS[4] queue   KEYS[5] queue expiries
-- ARGV[1] the waiter's id
-- ARGV[2] 'queued': waiters queue (what it took back wakes the queue's next head, see release_exclusive.lua) |
--         'broadcast' (quorum mode): a writer-waiting marker taken back is published on ARGV[4] (wakes the readers)
-- ARGV[3] the queue's settings (queue.lua's queueSettings): entry lifetime, how long a queue head has to claim the
--         key granted to it, refresh, 'sharded' (SPUBLISH) or 'plain' (PUBLISH), liveness prefix
-- ARGV[4] wake-up channel (queued waiters: '<channel>:<waiter id>')
-- Returns 1 when it took anything back, 0 otherwise.

-- @queue.lua

local queuedMode = ARGV[2] == 'queued'
local settings = queueSettings(ARGV[3])
local publishCommand = settings.publish
local took = 0
local nowMs = math.floor(serverMicros() / 1000)
if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('DEL', KEYS[1])
    took = 1
    if not queuedMode then
        -- wake the readers the marker held back
        redis.pcall(publishCommand, ARGV[4], '1')
    end
end
if grantedTo(redis.call('GET', KEYS[2]), ARGV[1] .. '|W') then
    redis.call('DEL', KEYS[2])
    took = 1
end
if redis.call('ZREM', KEYS[4], ARGV[1] .. '|W', ARGV[1] .. '|R') > 0 then
    redis.call('ZREM', KEYS[5], ARGV[1] .. '|W', ARGV[1] .. '|R')
    took = 1
end
if took == 1 and queuedMode and redis.call('EXISTS', KEYS[4]) == 1 then
    local holder = redis.call('GET', KEYS[2])
    if not holder and redis.call('ZCOUNT', KEYS[3], nowMs + 1, '+inf') == 0 then
        wakeQueueHead(KEYS[2], KEYS[4], KEYS[5], nowMs, ARGV[4], publishCommand, settings.claimMs, false, settings.live,
            settings.entryMs)
    elseif holder and string.sub(holder, 1, 9) == 'released:' then
        -- a holdAtLeast nobody owns ends without a release: the new head is told to look again (its last try may
        -- have seen a whole lease; the head that was told at the release is the one leaving)
        wakeQueueHead(KEYS[2], KEYS[4], KEYS[5], nowMs, ARGV[4], publishCommand, settings.claimMs, true, settings.live,
            settings.entryMs)
    end
end
return took
