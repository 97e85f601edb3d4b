-- Takes the exclusive (write) lock in one step and returns a fencing token.
-- KEYS[1] lock (string: owner token)   KEYS[2] readers (zset: token -> lease end, ms)
-- KEYS[3] writer-waiting marker        KEYS[4] fencing counter
-- ARGV[1] token   ARGV[2] lease ms   ARGV[3] writer-waiting ms (0: do not queue ahead of readers)
-- ARGV[4] the waiting writer's id (stable over its tries, so it can take its own marker back)
-- ARGV[5] fencing rule: 'count' for a plain counter without expiry (quorum mode), else clock-based
-- Returns {1, fencing token} when granted, {0, ms until the blocker's lease ends} when not.
local lease = tonumber(ARGV[2])
if redis.call('EXISTS', KEYS[2], KEYS[3]) > 0 then
    -- slow path: readers, or a marker left by a writer that waited for them
    local time = redis.call('TIME')
    local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
    redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', nowMs)
    local lastReader = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
    if lastReader[1] then
        -- readers hold it: new readers must queue behind this writer, or a stream of them starves it
        if tonumber(ARGV[3]) > 0 then
            redis.call('SET', KEYS[3], ARGV[4], 'PX', ARGV[3])
        end
        return {0, math.max(1, tonumber(lastReader[2]) - nowMs)}
    end
    if redis.call('EXISTS', KEYS[1]) == 0 then
        redis.call('DEL', KEYS[3])
    end
end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', lease) then
    -- PTTL is 0 in the holder's last millisecond: that is "look again in 1 ms", not "no expiry"
    local holderTtl = redis.call('PTTL', KEYS[1])
    if holderTtl < 0 then
        holderTtl = lease
    end
    return {0, math.max(1, holderTtl)}
end
if ARGV[5] == 'count' then
    -- quorum mode: a plain counter that never expires (QuorumLockServer explains why)
    local counted = redis.call('INCR', KEYS[4])
    redis.call('PERSIST', KEYS[4])
    return {1, counted}
end
-- the token is never below the server clock in microseconds, so a lost counter (restart without
-- persistence, failover to a replica that missed it) cannot make tokens go back
local time = redis.call('TIME')
local fence = tonumber(time[1]) * 1000000 + tonumber(time[2])
local counterTtl = lease + 60000
local previous = tonumber(redis.call('SET', KEYS[4], string.format('%.0f', fence), 'PX', counterTtl, 'GET') or '0')
if previous >= fence then
    -- more than one grant in a microsecond: count on from the previous token
    fence = previous + 1
    redis.call('SET', KEYS[4], string.format('%.0f', fence), 'PX', counterTtl)
end
return {1, fence}
