-- The exclusive lock's value, put in front of every script that reads or writes it (LockScript):
-- '<owner token>@<last fencing token granted to that owner>' (the end of its reserved block). Carrying the
-- last token in the value spares a counter key per held lock; a counter key is written only when a released
-- or expiring lock's tokens reach past the server clock (see fence.lua). A bare '<owner token>' (written by
-- an earlier version) is still owned by that token. A lock released while its holdAtLeast still runs keeps the
-- key as 'released:' followed by its value (releasedValue): taken, with its last token, but owned by no token,
-- so no renewal, however late, extends it.

-- the last fencing token recorded for token in the lock's value (0: none recorded), or nil when token does
-- not own the lock
local function ownersLastFence(value, token)
    if not value then
        return nil
    end
    local length = #token
    if string.sub(value, 1, length) ~= token then
        return nil
    end
    if #value == length then
        return 0
    end
    if string.byte(value, length + 1) ~= 64 then
        return nil
    end
    return tonumber(string.sub(value, length + 2))
end

local function ownedBy(value, token)
    return ownersLastFence(value, token) ~= nil
end

local function lockValue(token, last)
    return token .. '@' .. string.format('%.0f', last)
end

-- the last fencing token recorded in a lock's value (0 when there is none)
local function lastFenceOf(value)
    return tonumber(value and string.match(value, '@(%d+)$') or '0')
end

-- the value of a lock released while its holdAtLeast runs: still taken, owned by no token
local function releasedValue(value)
    return 'released:' .. value
end
