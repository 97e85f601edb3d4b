-- Takes a shared (read) lock in one step and returns a fencing token. (owner.lua and fence.lua are put in front.)
-- KEYS[1] lock   KEYS[2] readers   KEYS[3] writer-waiting marker   KEYS[4] fencing counter
-- KEYS[5] queue of waiting instances   KEYS[6] their expiries
-- ARGV: as acquire_exclusive.lua's (the writer-waiting ms and the token block are not read)
-- Returns {1, fencing token, fencing token} when granted, {0, ms to wait at most} when not.

-- @queue.lua

local lease = tonumber(ARGV[2])
local member = ARGV[6] .. '|R'
local queued = string.sub(ARGV[5], 1, 1) ~= '0' -- '1' joins the queue when refused, '2' is already in it
local settings = queueSettings(ARGV[7])
local entryMs = settings.entryMs
local live = settings.live
local claimMs = settings.claimMs
local refreshMs = settings.refreshMs
local nowMicros = serverMicros()
local nowMs = math.floor(nowMicros / 1000)

local function refuse(waitMs, held)
    if queued then
        waitMs = enqueue(KEYS[5], KEYS[6], member, nowMicros, entryMs, waitMs, live, claimMs, refreshMs,
            string.sub(ARGV[5], 1, 1) == '2')
        -- a quiet holder's release would not look at the queue (owner.lua): tell it that someone waits
        local noisy = held and noisyValue(redis.call('GET', KEYS[1]))
        if noisy then
            redis.call('SET', KEYS[1], noisy, 'KEEPTTL')
        end
    end
    return {0, math.max(1, waitMs)}
end

local holderTtl = redis.call('PTTL', KEYS[1])
if holderTtl ~= -2 then
    -- PTTL is 0 in the holder's last millisecond: "look again in 1 ms", not "no expiry"
    if holderTtl < 0 then
        holderTtl = lease
    end
    return refuse(holderTtl, true)
end
local writerWaiting = redis.call('PTTL', KEYS[3])
if writerWaiting ~= -2 then
    -- the mark keeps out readers that came after the waiting writer; one that queued before it goes first
    -- (first come, first served: refused here, the queue's head would wait for a writer that waits for it)
    local writer = redis.call('GET', KEYS[3])
    local readerRank = writer and redis.call('ZRANK', KEYS[5], member)
    local writerRank = readerRank and redis.call('ZRANK', KEYS[5], writer .. '|W')
    if not (readerRank and writerRank and readerRank < writerRank) then
        if writerWaiting < 0 then
            writerWaiting = lease
        end
        return refuse(writerWaiting)
    end
end
if redis.call('EXISTS', KEYS[5]) == 1 then
    pruneQueue(KEYS[5], KEYS[6], nowMs)
    if live then
        liveHead(KEYS[5], KEYS[6], nowMs, live, entryMs) -- a dead writer at the head keeps nobody out
    end
    -- readers share, but not ahead of a writer that queued before them (it would starve)
    local rank = redis.call('ZRANK', KEYS[5], member)
    local ahead = rank and (rank > 0 and redis.call('ZRANGE', KEYS[5], 0, rank - 1) or {})
        or redis.call('ZRANGE', KEYS[5], 0, -1)
    for _, waiting in ipairs(ahead) do
        if string.sub(waiting, -2) == '|W' then
            return refuse(entryMs)
        end
    end
    dequeue(KEYS[5], KEYS[6], member)
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', nowMs)
redis.call('ZADD', KEYS[2], nowMs + lease, ARGV[1])
if redis.call('PTTL', KEYS[2]) < lease then
    redis.call('PEXPIRE', KEYS[2], lease)
end
return grantFence(KEYS[4], lease, 1, fenceRule(ARGV[3]), true)
