-- A waiting instance's liveness key, written once per refresh interval while any of its waiters sleeps in a fair
-- queue (queue.lua, liveness mode): one write per instance, however many keys it waits for.
-- KEYS[1] the liveness key ('<key prefix>instance:<instance id>')   ARGV[1] how long it lasts, ms (the entry timeout)
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
return 1
