-- A look by a waiter already queued (liveness mode, one server), between the tries that refresh its queue entry: it
-- reads the key only and writes nothing, so it costs two reads instead of a try's seven commands. The waiter sends
-- it only while the expiry its last try gave its entry still covers the sleep that follows (Acquisition).
-- KEYS[1] lock   ARGV[1] the waiter's queue member ('<waiter id>|W')   ARGV[2] the longest sleep allowed, ms (its
-- last try's answer: the refresh interval for the head, a claim timeout more per entry ahead)
-- Returns -1 when the waiter must try now: the key is free, granted to it (a lost wake-up), or held quietly (its
-- holder's release would not look at the queue: only a try marks the value); else how long to sleep, ms.
local value = redis.call('GET', KEYS[1])
if not value or string.sub(value, 1, 12 + #ARGV[1]) == 'queue-grant:' .. ARGV[1] or string.find(value, '#%d+$') then
    return -1
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
    return -1
end
return math.max(1, math.min(ttl, tonumber(ARGV[2])))
