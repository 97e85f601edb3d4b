-- The resource-side fencing check a user would write, for the read of a read-modify-write.
-- KEYS[1] highest token seen   KEYS[2] counter   KEYS[3] who is inside (for the test's fault targeting)
-- ARGV[1] fencing token   ARGV[2] worker id
-- Returns {1, counter, now in microseconds} or {0, 0, now} when a higher token was seen already.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local token = tonumber(ARGV[1])
if token < tonumber(redis.call('GET', KEYS[1]) or '0') then
    return {0, 0, now}
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[3], ARGV[2] .. ':' .. ARGV[1] .. ':' .. string.format('%.0f', now))
return {1, tonumber(redis.call('GET', KEYS[2]) or '0'), now}
