-- The fair queue of waiting instances, put where a script says "-- @queue.lua" (LockScript), after fence.lua.
-- One entry per instance and key: member '<waiter id>|W' (exclusive) or '<waiter id>|R' (shared) in a zset
-- scored by arrival (server clock, µs), and its expiry (ms) in a second zset. An entry not refreshed is gone after
-- its expiry, so a crashed instance never blocks the queue for long. Two ways to keep entries:
-- * per entry (a Redis Cluster, where a script touches one slot only): every try refreshes the entry for the entry
--   timeout, and a waiter tries at least every refresh interval;
-- * liveness (one server: standalone or Sentinel; 'live' is the prefix of the instances' liveness keys,
--   '<prefix><waiter id>'): an entry lasts as long as its waiter sleeps (a writer's three times as long: it looks
--   between its tries with look.lua, which writes nothing) plus the entry timeout, and each waiting
--   instance writes one liveness key per refresh interval, whatever the number of its entries; a head whose
--   instance wrote none within the entry timeout is dropped when its turn would come. A waiter then sleeps until
--   the holder's lease end (or its wake-up), but the head at most a refresh interval and each entry behind it a
--   claim timeout more, so that a key lost with a failover, or granted to a head that never claims it, is taken
--   in time.
-- A release grants the key directly to an exclusive head ('queue-grant:<member>', or 'queue-grant:<member>@<the
-- releasing holder's last fencing token>' so that the claim starts above it without reading the counter key; a
-- short lease that only that instance can turn into its own) and publishes to that instance's channel only; shared heads (all
-- consecutive ones) are woken to take their read leases. Nobody else is woken, so nobody tries and loses.

local function pruneQueue(queueKey, expiryKey, nowMs)
    local expired = redis.call('ZRANGEBYSCORE', expiryKey, '-inf', nowMs)
    if #expired > 0 then
        redis.call('ZREM', queueKey, unpack(expired))
        redis.call('ZREM', expiryKey, unpack(expired))
    end
end

-- joins the queue, or keeps its place and refreshes its expiry when already in it; returns how long the waiter
-- may sleep (waitMs at most) before its next try must refresh the entry. lookOfQueued: a later try of a waiter already
-- queued, whose instance's heartbeat keeps its liveness key (WaitContext): the key is written only when the entry
-- was gone (it joins again)
-- (liveness mode) how many sleeps a writer's try keeps its queue entry for: its own, and the looks' after it
-- (BetweenTries)
local LOOKS_PER_TRY_PLUS_ONE = 3

local function enqueue(queueKey, expiryKey, member, nowMicros, entryMs, waitMs, live, claimMs, refreshMs,
        lookOfQueued)
    local nowMs = math.floor(nowMicros / 1000)
    local rank = live and redis.call('ZRANK', queueKey, member)
    if not rank then
        redis.call('ZADD', queueKey, 'NX', nowMicros, member)
    end
    if not live then
        redis.call('ZADD', expiryKey, nowMs + entryMs, member)
        -- every entry expires within entryMs of now, so the keys may too: a queue of dead instances vanishes
        redis.call('PEXPIRE', queueKey, entryMs)
        redis.call('PEXPIRE', expiryKey, entryMs)
        return math.min(waitMs, entryMs)
    end
    -- the head looks again within a refresh interval (a key lost with a failover stands free no longer), each entry
    -- further back a claim timeout later: after a grant its head never claimed, the next one looks
    waitMs = math.min(waitMs, refreshMs + claimMs * (rank or redis.call('ZRANK', queueKey, member)))
    -- an exclusive entry lasts through this sleep and two more, plus the entry timeout: its waiter's looks between
    -- its tries (look.lua) write nothing. A crashed instance's entries still go as soon as its liveness key is gone.
    -- A reader's entry lasts one sleep (readers do not look; a reader's entry at the head holds writers back until
    -- it is taken, withdrawn or expired)
    local sleeps = string.sub(member, -2) == '|W' and LOOKS_PER_TRY_PLUS_ONE or 1
    local keepMs = sleeps * waitMs + entryMs
    redis.call('ZADD', expiryKey, nowMs + keepMs, member)
    -- the keys outlive every entry's expiry (never shortened here: others may sleep longer), with slack: a head
    -- looks again every refresh interval, and extending them at each look was two commands a look
    if redis.call('PTTL', queueKey) < keepMs then
        redis.call('PEXPIRE', queueKey, 2 * keepMs)
        redis.call('PEXPIRE', expiryKey, 2 * keepMs)
    end
    if not rank or not lookOfQueued then
        redis.call('SET', live .. string.sub(member, 1, -3), '1', 'PX', entryMs)
    end
    return waitMs
end

local function dequeue(queueKey, expiryKey, member)
    redis.call('ZREM', queueKey, member)
    redis.call('ZREM', expiryKey, member)
end

-- Liveness mode: the first entry whose instance is alive, after dropping those before it whose instance is not; an
-- entry without a liveness key that expires within entryMs anyway (kept by an instance that refreshes per entry)
-- counts as alive. Without liveness, the first entry. Nil when nobody waits.
local function liveHead(queueKey, expiryKey, nowMs, live, entryMs)
    while true do
        local head = redis.call('ZRANGE', queueKey, 0, 0)[1]
        if not head or not live or redis.call('EXISTS', live .. string.sub(head, 1, -3)) == 1
                or tonumber(redis.call('ZSCORE', expiryKey, head) or '0') - nowMs <= entryMs then
            return head
        end
        dequeue(queueKey, expiryKey, head)
    end
end

-- Whether a lock's value is a queue grant to member, and the fencing token the claim must start above (nil:
-- unknown, read the counter key)
local function grantedTo(value, member)
    local prefix = 'queue-grant:' .. member
    if not value or string.sub(value, 1, #prefix) ~= prefix then
        return false
    end
    if #value == #prefix then
        return true, nil
    end
    if string.byte(value, #prefix + 1) ~= 64 then
        return false
    end
    return true, tonumber(string.sub(value, #prefix + 2))
end

local function waiterChannel(channelBase, member)
    return channelBase .. ':' .. string.sub(member, 1, -3)
end

-- Wakes the head of the queue once the key is free: an exclusive head gets the key for claimMs; shared
-- heads are told to come. With lookOnly (the key is still taken a while: holdAtLeast) nothing is granted and
-- the heads are only told to look again. In liveness mode a dead head is passed over, and an exclusive head leaves
-- the queue with its grant (a live instance that no longer waits for it would otherwise get it at every release).
-- grantAbove: the releasing holder's last fencing token (nil or 0: unknown, the claim reads the counter key).
-- Returns 2 when Redis refused a publish (ACL), else 1; and true when the key was granted to an exclusive head (its
-- value replaced: a release need not delete it first).
local function wakeQueueHead(lockKey, queueKey, expiryKey, nowMs, channelBase, publishCommand, claimMs, lookOnly,
        live, entryMs, grantAbove)
    pruneQueue(queueKey, expiryKey, nowMs)
    local heads
    if live then
        local head = liveHead(queueKey, expiryKey, nowMs, live, entryMs)
        heads = (head == nil or string.sub(head, -2) == '|W') and {head} or redis.call('ZRANGE', queueKey, 0, 63)
    else
        heads = redis.call('ZRANGE', queueKey, 0, 63)
    end
    local result = 1
    local granted = false
    for i, member in ipairs(heads) do
        local exclusiveHead = string.sub(member, -2) == '|W'
        if exclusiveHead and i > 1 then
            break
        end
        if exclusiveHead and not lookOnly then
            local above = (grantAbove and grantAbove > 0) and ('@' .. string.format('%.0f', grantAbove)) or ''
            redis.call('SET', lockKey, 'queue-grant:' .. member .. above, 'PX', claimMs)
            granted = true
            if live then
                dequeue(queueKey, expiryKey, member)
            end
        end
        local published = redis.pcall(publishCommand, waiterChannel(channelBase, member), exclusiveHead and 'g' or 'r')
        if type(published) == 'table' and published['err'] then
            result = 2
        end
        if exclusiveHead then
            break
        end
    end
    return result, granted
end

-- SPUBLISH where the server has it (ServerVersion.hasShardedPubSub): decided on the server's own name and
-- version, since Valkey says REDIS_VERSION 7.2.4 whatever its own (Redis has no SERVER_NAME here)
local function publishCommandFor(mode)
    if mode ~= 'sharded' then
        return 'PUBLISH'
    end
    local name = redis.SERVER_NAME or 'redis'
    local sharded
    if name == 'valkey' then
        sharded = (redis.VALKEY_VERSION_NUM or redis.REDIS_VERSION_NUM or 0) >= 0x070200
    else
        sharded = name == 'redis' and (redis.REDIS_VERSION_NUM or 0) >= 0x070000
    end
    return sharded and 'SPUBLISH' or 'PUBLISH'
end

-- The queue's settings, one script argument that only the contended paths read (each argument costs Redis a Lua
-- string and the client an argument object, ScriptedLockServer), the same for acquire, release, withdraw and
-- reserve_fences: '<entry ms> <claim ms> <refresh ms> <sharded|plain> <liveness prefix>', the prefix empty without
-- liveness (entries per try).
local function queueSettings(text)
    local entry, claim, refresh, mode, live = string.match(text, '^(%d+) (%d+) (%d+) (%a+) ?(.*)$')
    return {entryMs = tonumber(entry), claimMs = tonumber(claim), refreshMs = tonumber(refresh),
        publish = publishCommandFor(mode), live = live ~= '' and live or nil}
end
