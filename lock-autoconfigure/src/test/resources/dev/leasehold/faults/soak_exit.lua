-- Soak: leaves a key's critical section, writing the counter through the fencing check.
-- KEYS[1] highest token seen   KEYS[2] counter   KEYS[3] inside marker   KEYS[4] accepted sections (global)
-- ARGV[1] fencing token   ARGV[2] new counter value
-- Returns 1 when written, 0 when refused.
if redis.call('GET', KEYS[3]) == ARGV[1] then
    redis.call('DEL', KEYS[3])
end
if tonumber(ARGV[1]) < tonumber(redis.call('GET', KEYS[1]) or '0') then
    return 0
end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('INCR', KEYS[4])
return 1
