-- The release of an exclusive lock nobody queues for, with only the keys it reads, for the same reason as
-- acquire_uncontended.lua: deletes the lock as release_exclusive.lua does when the token owns it, no hold is left
-- and the queue is empty (a quiet grant's value, '<owner token>#<last fencing token>', says so without asking),
-- keeping the last token in the counter key (fence.lua's keepFenceAfterRelease) when the server clock has not passed
-- it. Answers 0 where that script answers 0 without writing (another owner's value), and -1 where it has more to
-- do (a queue whose head to grant and wake; an expired key, whose queue may wait): the client then sends
-- release_exclusive.lua.
-- KEYS[1] lock   KEYS[2] fencing counter   KEYS[3] queue   ARGV[1] owner token
-- Returns 1 when released, 0 when the token does not own the lock, -1 when this is not its case.
local value = redis.call('GET', KEYS[1])
if not value then
    return -1
end
local length = #ARGV[1]
if string.sub(value, 1, length) ~= ARGV[1] then
    return 0
end
local separator = string.byte(value, length + 1)
if separator == 64 then
    -- '@': someone may have queued since the grant
    if redis.call('EXISTS', KEYS[3]) == 1 then
        return -1
    end
elseif separator ~= 35 then
    -- the bare token of an earlier version is release_exclusive.lua's; any other character after the token makes it
    -- another owner's value
    return separator == nil and -1 or 0
end
-- the clock has passed the last token: seconds, then µs (as release_exclusive.lua)
local last = string.sub(value, length + 2)
local time = redis.call('TIME')
local lastSeconds = string.sub(last, 1, -7)
local passed
if lastSeconds == time[1] then
    passed = tonumber(string.sub(last, -6)) < tonumber(time[2])
else
    passed = #last > 6 and tonumber(lastSeconds) < tonumber(time[1])
end
if not passed then
    -- the next grant must be above the last token: the counter key keeps it while the clock catches up, plus a
    -- minute (fence.lua's counterWrite)
    local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
    local kept = math.max(tonumber(last), tonumber(redis.call('GET', KEYS[2]) or '0'))
    local aheadMs = math.max(0, math.ceil((kept - now) / 1000))
    redis.call('SET', KEYS[2], string.format('%.0f', kept), 'PX', 60000 + aheadMs)
end
redis.call('DEL', KEYS[1])
return 1
