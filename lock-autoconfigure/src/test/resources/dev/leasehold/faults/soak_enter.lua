-- Soak: enters a key's critical section through the fencing check.
-- KEYS[1] highest token seen   KEYS[2] counter   KEYS[3] inside marker   KEYS[4] double grants seen (global)
-- ARGV[1] fencing token
-- Returns {1, counter} or {0, 0} when a higher token was seen already. Entering while another holder is
-- inside counts a double grant.
if tonumber(ARGV[1]) < tonumber(redis.call('GET', KEYS[1]) or '0') then
    return {0, 0}
end
redis.call('SET', KEYS[1], ARGV[1])
if redis.call('EXISTS', KEYS[3]) == 1 then
    redis.call('INCR', KEYS[4])
end
redis.call('SET', KEYS[3], ARGV[1])
return {1, tonumber(redis.call('GET', KEYS[2]) or '0')}
