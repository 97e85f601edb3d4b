-- The exclusive lock's value, put in front of every script that reads or writes it (LockScript):
-- '<owner token>@<last fencing token granted to that owner>' (the end of its reserved block). Carrying the
-- last token in the value spares a counter key per held lock; a counter key is written only when a released
-- or expiring lock's tokens reach past the server clock (see fence.lua). A bare '<owner token>' (written by
-- an earlier version) is still owned by that token. A lock released while its holdAtLeast still runs keeps the
-- key as 'released:' followed by its value (releasedValue): taken, with its last token, but owned by no token,
-- so no renewal, however late, extends it.
-- A quiet grant is written '<owner token>#<last fencing token>' instead: nobody queued for the key when it was
-- granted, nor since, so its release need not look at the queue. A try that joins the queue while the key is
-- held that way turns the value into the '@' form first (noisyValue), so its release wakes the queue.

-- the last fencing token recorded for token in the lock's value (0: none recorded), or nil when token does
-- not own the lock; and true when the value is a quiet grant's
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
    local separator = string.byte(value, length + 1)
    if separator ~= 64 and separator ~= 35 then
        return nil
    end
    return tonumber(string.sub(value, length + 2)), separator == 35
end

local function ownedBy(value, token)
    return ownersLastFence(value, token) ~= nil
end

local function lockValue(token, last, quiet)
    return token .. (quiet and '#' or '@') .. string.format('%.0f', last)
end

-- the last fencing token recorded in a lock's value (0 when there is none)
local function lastFenceOf(value)
    return tonumber(value and string.match(value, '[@#](%d+)$') or '0')
end

-- a quiet grant's value in the '@' form (whose release looks at the queue), or nil when the value is not a quiet
-- grant's
local function noisyValue(value)
    local at = value and string.find(value, '#%d+$')
    return at and (string.sub(value, 1, at - 1) .. '@' .. string.sub(value, at + 1)) or nil
end

-- the value of a lock released while its holdAtLeast runs: still taken, owned by no token
local function releasedValue(value)
    return 'released:' .. value
end
