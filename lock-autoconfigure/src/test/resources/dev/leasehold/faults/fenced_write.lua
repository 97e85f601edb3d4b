-- The resource-side fencing check a user would write, for the write of a read-modify-write.
-- KEYS[1] highest token seen   KEYS[2] counter   KEYS[3] who is inside
-- KEYS[4] (optional) the store's own list of accepted writes ('<worker>|<token>'), in the same step as the
--         write: a worker killed between its write and its log line still leaves its write counted
-- ARGV[1] fencing token   ARGV[2] new counter value   ARGV[3] worker id
-- Returns {1, now in microseconds} when written, {0, now} when refused (a higher token was seen).
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
if tonumber(ARGV[1]) < tonumber(redis.call('GET', KEYS[1]) or '0') then
    return {0, now}
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
if KEYS[4] then
    redis.call('RPUSH', KEYS[4], ARGV[3] .. '|' .. ARGV[1])
end
local inside = redis.call('GET', KEYS[3])
if inside and string.sub(inside, 1, string.len(ARGV[3]) + 1) == ARGV[3] .. ':' then
    redis.call('DEL', KEYS[3])
end
return {1, now}
