-- What Redis holds for one logical key, read-only (for diagnostics). Never returns an owner token.
-- (owner.lua is put in front.)
-- KEYS[1] lock   KEYS[2] readers   KEYS[3] writer-waiting marker   KEYS[4] fencing counter
-- KEYS[5] (optional) queue of waiting instances: a queued writer is a waiting writer too
-- KEYS[6] (optional) the queue entries' expiries: an entry past its expiry is no longer waiting
-- Returns {exclusive lease left ms (-2: not held), live readers, longest reader lease left ms,
--          writer-waiting ms left (-2: none), fencing counter (string, false when absent),
--          instances holding it (ids), queue entries in order ('<instance id>|W' or '|R')}
local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local lockTtl = redis.call('PTTL', KEYS[1])
local readers = redis.call('ZCOUNT', KEYS[2], '(' .. nowMs, '+inf')
local readerLeft = 0
if readers > 0 then
    local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
    readerLeft = math.max(0, tonumber(last[2]) - nowMs)
end
local writerWaiting = redis.call('PTTL', KEYS[3])
if writerWaiting == -2 and KEYS[5] then
    for _, member in ipairs(redis.call('ZRANGE', KEYS[5], 0, -1)) do
        if string.sub(member, -2) == '|W' then
            writerWaiting = math.max(1, redis.call('PTTL', KEYS[5]))
            break
        end
    end
end

-- owner tokens are '<instance id>:<secret>': only the instance id leaves this script. A key the queue granted
-- to an instance that has not claimed it yet holds 'queue-grant:<instance id>|W', maybe followed by '@<token>'.
local function instanceOf(owner)
    if string.sub(owner, 1, 12) == 'queue-grant:' then
        return string.match(owner, '^queue%-grant:(.*)|W') or '?'
    end
    return string.match(owner, '^(.*):[^:]*$') or '?'
end
local holders = {}
local seen = {}
local function hold(owner)
    local instance = instanceOf(owner)
    if not seen[instance] then
        seen[instance] = true
        holders[#holders + 1] = instance
    end
end
local owner = redis.call('GET', KEYS[1])
if owner then
    -- a lock released while its holdAtLeast runs (owner.lua's releasedValue) is still its instance's
    hold(string.sub(owner, 1, 9) == 'released:' and string.sub(owner, 10) or owner)
end
for _, token in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. nowMs, '+inf')) do
    hold(token)
end

local queue = {}
if KEYS[5] then
    local expiresAt = {}
    if KEYS[6] then
        local expiries = redis.call('ZRANGE', KEYS[6], 0, -1, 'WITHSCORES')
        for i = 1, #expiries, 2 do
            expiresAt[expiries[i]] = tonumber(expiries[i + 1])
        end
    end
    for _, member in ipairs(redis.call('ZRANGE', KEYS[5], 0, -1)) do
        if not KEYS[6] or (expiresAt[member] or 0) > nowMs then
            queue[#queue + 1] = member
        end
    end
end
-- the counter: the highest of the counter key and the last token recorded in the exclusive lock's value
local counter = redis.call('GET', KEYS[4])
local recorded = owner and lastFenceOf(owner) or 0
if recorded > tonumber(counter or '0') then
    counter = string.format('%.0f', recorded)
end
return {lockTtl, readers, readerLeft, writerWaiting, counter, holders, queue}
