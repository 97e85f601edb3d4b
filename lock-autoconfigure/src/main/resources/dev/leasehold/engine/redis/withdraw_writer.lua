-- A writer that stops waiting takes back its writer-waiting marker (only its own), so new readers are
-- not kept out for the rest of its wait, and wakes the readers that the marker held back.
-- KEYS[1] writer-waiting marker   ARGV[1] the writer's id   ARGV[2] wake-up channel
-- ARGV[3] 'sharded' on a Redis 7+ Cluster: wake waiters with SPUBLISH (stays on the slot's node, no
--         broadcast over the whole cluster bus); anything else: PUBLISH
-- Returns 1 when the marker was this writer's and is gone, 0 otherwise.
local publishCommand = (ARGV[3] == 'sharded' and redis.REDIS_VERSION_NUM and redis.REDIS_VERSION_NUM >= 0x070000)
    and 'SPUBLISH' or 'PUBLISH'
if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('DEL', KEYS[1])
    redis.pcall(publishCommand, ARGV[2], '1')
    return 1
end
return 0
