-- A look by a waiter already queued (liveness mode, one server), between the tries that refresh its queue entry: it
-- reads and writes nothing else, so it costs four commands instead of a try's seven. The waiter sends it only while
-- the expiry its last try gave its entry (queue.lua's enqueue: that try's sleep and two more, plus the entry timeout)
-- still covers the sleep that follows (BetweenTries).
-- KEYS[1] lock   KEYS[2] queue of waiting instances
-- ARGV[1] the waiter's queue member ('<waiter id>|W')   ARGV[2] refresh ms   ARGV[3] claim ms
-- Returns -1 when the waiter must try now: the key is free, granted to it (a lost wake-up), or held quietly (its
-- holder's release would not look at the queue: only a try marks the value), or its entry is gone; else how long to
-- sleep, ms: the holder's lease, at most a refresh interval for the head and a claim timeout more per entry ahead (as
-- a try answers).
local value = redis.call('GET', KEYS[1])
if not value or string.sub(value, 1, 12 + #ARGV[1]) == 'queue-grant:' .. ARGV[1] or string.find(value, '#%d+$') then
    return -1
end
local rank = redis.call('ZRANK', KEYS[2], ARGV[1])
if not rank then
    return -1
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
    return -1
end
return math.max(1, math.min(ttl, tonumber(ARGV[2]) + tonumber(ARGV[3]) * rank))
