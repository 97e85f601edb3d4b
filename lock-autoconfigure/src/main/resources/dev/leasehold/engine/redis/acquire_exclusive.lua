-- Takes the exclusive (write) lock in one step and returns a fencing token. (owner.lua and fence.lua are put
-- where the script says so, after its uncontended path.)
-- KEYS[1] lock (string: '<owner token>@<last fencing token>', owner.lua)   KEYS[2] readers (zset: token -> lease end, ms)
-- KEYS[3] writer-waiting marker        KEYS[4] fencing counter
-- KEYS[5] queue of waiting instances   KEYS[6] their expiries
-- ARGV[1] token   ARGV[2] lease ms   ARGV[3] fencing rule (fence.lua's fenceRule): 'count...' in quorum mode,
-- else clock-based   ARGV[4] fencing tokens to reserve for hand-offs (1: none)
-- ARGV[5] this try: '<1: join (or stay in) the queue when refused, 2: the same by a waiter already queued (its own
-- entry makes the key contended: no uncontended look), 0: a single try or no queue> <writer-waiting ms (0: do not
-- queue ahead of readers)>'
-- ARGV[6] the waiter's id (stable over its tries: its writer marker and its queue entry)
-- ARGV[7] the queue's settings (queue.lua's queueSettings: entry lifetime, claim and refresh ms, PUBLISH or
-- SPUBLISH, liveness prefix)   ARGV[8] wake-up channel
-- Returns {1, fencing token, last reserved token} when granted, {0, ms to wait at most} when not.
-- The uncontended path first, before a function is defined (every definition is a closure made on every run, most
-- of a short script's cost in Redis): the clock rule, a block that ends within the lease, and nothing there (not
-- held, no readers, no writer waiting for readers, nobody queued, no counter key). It is what fence.lua's
-- grantFence does then, spelled out: the token is the clock, the block runs on from it, and the value is a quiet
-- grant's (owner.lua).
-- (A block of at most 999 tokens ends within any lease of 2 ms or more; tonumber is costly on long digit strings.)
local alreadyQueued = string.byte(ARGV[5]) == 50
local uncontendedChecked = ARGV[3] == 'clock' and ARGV[2] ~= '1' and ARGV[2] ~= '0' and #ARGV[4] <= 3
    and not alreadyQueued
if uncontendedChecked and redis.call('EXISTS', KEYS[1], KEYS[2], KEYS[3], KEYS[5], KEYS[4]) == 0 then
    local time = redis.call('TIME')
    local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
    local last = now + tonumber(ARGV[4]) - 1
    -- '%d', not lockValue's '%.0f': the same digits for a clock in µs (below 2^53), a fraction of the cost
    redis.call('SET', KEYS[1], ARGV[1] .. '#' .. string.format('%d', last), 'PX', ARGV[2])
    return {1, now, last}
end
-- the same in quorum mode (the counting rule without retention, fence.lua's countFence): nothing there, so the
-- node's counter moves on by the block and the grant is recorded in the '@' form (a quorum node's release publishes
-- anyway), before any function is defined
if ARGV[3] == 'count' and not alreadyQueued
        and redis.call('EXISTS', KEYS[1], KEYS[2], KEYS[3], KEYS[5]) == 0 then
    local block = tonumber(ARGV[4])
    local counted = redis.call('INCRBY', KEYS[4], block)
    redis.call('PERSIST', KEYS[4])
    redis.call('SET', KEYS[1], ARGV[1] .. '@' .. string.format('%d', counted), 'PX', ARGV[2])
    return {1, counted - block + 1, counted}
end

-- @owner.lua and fence.lua

local lease = tonumber(ARGV[2])
local blockSize = tonumber(ARGV[4])
local countRule = fenceRule(ARGV[3])
-- fast path: not held, no readers, no writer waiting for readers, nobody queued, and (clock rule) no counter
-- key to read: the usual one, since the last token lives in the lock's value while it is held (not asked twice:
-- with the clock rule the check above asked the same)
local fastPath = not uncontendedChecked and not alreadyQueued
    and redis.call('EXISTS', KEYS[1], KEYS[2], KEYS[3], KEYS[5], countRule and KEYS[1] or KEYS[4]) == 0

-- grants the key to this try's token and lease, with its fencing token and block recorded in the value; quiet
-- (owner.lua) on the uncontended path: nobody queued
-- above: a token the grant must be above (a queue grant's, the releasing holder's last), known to be at or above
-- the counter key, which is then not read
local function grant(counterAbsent, above)
    local granted = grantFence(KEYS[4], lease, blockSize, countRule, false, above, counterAbsent or above ~= nil)
    local quiet = counterAbsent and not countRule
    redis.call('SET', KEYS[1], lockValue(ARGV[1], granted[3], quiet), 'PX', lease)
    return granted
end

if fastPath then
    return grant(true)
end

-- @queue.lua

local member = ARGV[6] .. '|W'
local joins, writerWaitingMs = string.match(ARGV[5], '^(%d) (%d+)$')
local queued = joins ~= '0'
local settings = queueSettings(ARGV[7])
local entryMs = settings.entryMs
local live = settings.live
local claimMs = settings.claimMs
local refreshMs = settings.refreshMs

local function refuse(waitMs, nowMicros, holder)
    if queued then
        waitMs = enqueue(KEYS[5], KEYS[6], member, nowMicros or serverMicros(), entryMs, waitMs, live, claimMs,
            refreshMs, alreadyQueued)
        -- a quiet holder's release would not look at the queue: tell it that someone waits
        local noisy = noisyValue(holder)
        if noisy then
            redis.call('SET', KEYS[1], noisy, 'KEEPTTL')
        end
    end
    return {0, math.max(1, waitMs)}
end

local function holderTtl()
    -- PTTL is 0 in the holder's last millisecond: that is "look again in 1 ms", not "no expiry"
    local ttl = redis.call('PTTL', KEYS[1])
    if ttl < 0 then
        ttl = lease
    end
    return math.max(1, ttl)
end

local holder = redis.call('GET', KEYS[1])
local grantedHere, grantAbove = grantedTo(holder, member)
if grantedHere then
    -- the release granted the key to this instance: claim it with this try's token and lease (no
    -- reader holds it then; a mark that kept readers out while this writer waited has done its job; a queued
    -- writer sets none, its place in the queue keeps readers out). The grant carries the releasing holder's last
    -- token: the counter key is never past it (no script writes it past a holder's last token while it holds, and
    -- nothing is granted between the release and this claim), so it is not read.
    if writerWaitingMs ~= '0' then
        redis.call('DEL', KEYS[3])
    end
    if not live then
        dequeue(KEYS[5], KEYS[6], member) -- with liveness the grant took it out of the queue
    end
    return grant(false, grantAbove)
end
local nowMicros = serverMicros()
local nowMs = math.floor(nowMicros / 1000)
if holder and live then
    -- expired entries go when a head is chosen (this one keeps or takes its place, and only reads its rank)
    return refuse(holderTtl(), nowMicros, holder)
end
pruneQueue(KEYS[5], KEYS[6], nowMs)
if holder then
    return refuse(holderTtl(), nowMicros, holder)
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', nowMs)
local lastReader = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
if lastReader[1] then
    -- readers hold it: new readers must queue behind this writer, or a stream of them starves it
    if tonumber(writerWaitingMs) > 0 then
        redis.call('SET', KEYS[3], ARGV[6], 'PX', writerWaitingMs)
    end
    return refuse(tonumber(lastReader[2]) - nowMs, nowMicros)
end
redis.call('DEL', KEYS[3])
local head = liveHead(KEYS[5], KEYS[6], nowMs, live, entryMs)
if head and head ~= member then
    if live then
        -- the key is free and nobody was granted it (a grant not claimed, a holder whose lease ran out): the head's
        -- turn now, not at its own next look
        wakeQueueHead(KEYS[1], KEYS[5], KEYS[6], nowMs, ARGV[8], settings.publish, claimMs, false, live,
            entryMs)
        return refuse(claimMs, nowMicros)
    end
    -- the key is free but others came first: their turn (a head that does not come expires)
    local headExpiry = tonumber(redis.call('ZSCORE', KEYS[6], head) or nowMs)
    return refuse(headExpiry - nowMs, nowMicros)
end
dequeue(KEYS[5], KEYS[6], member)
return grant()
