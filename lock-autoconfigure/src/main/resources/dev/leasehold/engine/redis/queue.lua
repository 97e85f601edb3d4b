-- The fair queue of waiting instances, put where a script says "-- @queue.lua" (LockScript), after fence.lua.
-- One entry per instance and key: member '<waiter id>|W' (exclusive) or '<waiter id>|R' (shared) in a zset
-- scored by arrival (server clock, µs), and its expiry (ms) in a second zset. A waiting instance refreshes
-- its entry on every try (about once a second); an entry not refreshed is gone after its expiry, so a
-- crashed instance never blocks the queue for longer than that.
-- A release grants the key directly to an exclusive head ('queue-grant:<member>', a short lease that only
-- that instance can turn into its own) and publishes to that instance's channel only; shared heads (all
-- consecutive ones) are woken to take their read leases. Nobody else is woken, so nobody tries and loses.

local function pruneQueue(queueKey, expiryKey, nowMs)
    local expired = redis.call('ZRANGEBYSCORE', expiryKey, '-inf', nowMs)
    if #expired > 0 then
        redis.call('ZREM', queueKey, unpack(expired))
        redis.call('ZREM', expiryKey, unpack(expired))
    end
end

-- joins the queue, or keeps its place and refreshes its expiry when already in it
local function enqueue(queueKey, expiryKey, member, nowMicros, entryMs)
    local nowMs = math.floor(nowMicros / 1000)
    redis.call('ZADD', queueKey, 'NX', nowMicros, member)
    redis.call('ZADD', expiryKey, nowMs + entryMs, member)
    -- every entry expires within entryMs of now, so the keys may too: a queue of dead instances vanishes
    redis.call('PEXPIRE', queueKey, entryMs)
    redis.call('PEXPIRE', expiryKey, entryMs)
end

local function dequeue(queueKey, expiryKey, member)
    redis.call('ZREM', queueKey, member)
    redis.call('ZREM', expiryKey, member)
end

local function waiterChannel(channelBase, member)
    return channelBase .. ':' .. string.sub(member, 1, -3)
end

-- Wakes the head of the queue once the key is free: an exclusive head gets the key for claimMs; shared
-- heads are told to come. With lookOnly (the key is still taken a while: holdAtLeast) nothing is granted and
-- the heads are only told to look again. Returns 2 when Redis refused a publish (ACL), else 1.
local function wakeQueueHead(lockKey, queueKey, expiryKey, nowMs, channelBase, publishCommand, claimMs, lookOnly)
    pruneQueue(queueKey, expiryKey, nowMs)
    local heads = redis.call('ZRANGE', queueKey, 0, 63)
    local result = 1
    for i, member in ipairs(heads) do
        local exclusiveHead = string.sub(member, -2) == '|W'
        if exclusiveHead and i > 1 then
            break
        end
        if exclusiveHead and not lookOnly then
            redis.call('SET', lockKey, 'queue-grant:' .. member, 'PX', claimMs)
        end
        local published = redis.pcall(publishCommand, waiterChannel(channelBase, member), exclusiveHead and 'g' or 'r')
        if type(published) == 'table' and published['err'] then
            result = 2
        end
        if exclusiveHead then
            break
        end
    end
    return result
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
