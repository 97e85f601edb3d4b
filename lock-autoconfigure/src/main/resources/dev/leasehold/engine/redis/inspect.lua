-- What Redis holds for one logical key, read-only (for diagnostics). Never returns an owner token.
-- KEYS[1] lock   KEYS[2] readers   KEYS[3] writer-waiting marker   KEYS[4] fencing counter
-- KEYS[5] (optional) queue of waiting instances: a queued writer is a waiting writer too
-- Returns {exclusive lease left ms (-2: not held), live readers, longest reader lease left ms,
--          writer-waiting ms left (-2: none), fencing counter (string, false when absent)}
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
return {lockTtl, readers, readerLeft, writerWaiting, redis.call('GET', KEYS[4])}
