-- Fixed window: admit iff the window's count plus this cost stays within the limit. The same
-- rule as ratelab.limiters.fixed_window, on the same grid: window k holds the ticks
-- [k x window, (k+1) x window), time in whole microseconds (ticks).
-- KEYS[1]  the counter of the window holding `now` (the caller names it after k)
-- ARGV     limit, window (ticks), now (ticks), cost, ttl_ms (how long the counter lives from
--          its last write), count_rejected (1: a refused request is counted too; else 0)
-- Returns  {allowed (1/0), remaining (whole requests of cost 1 still within the limit),
--           retry_after (ticks until the next window; 0 when allowed),
--           reset_after (ticks until the count is back to zero)}
-- The count is written with 17 significant digits: a whole count reads as an integer.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local ttl_ms = tonumber(ARGV[5])
if not (limit and limit > 0 and cost and cost > 0 and ttl_ms and ttl_ms > 0) then
  return redis.error_reply("ERR fixed_window: limit, cost and ttl_ms must be positive numbers")
end
local function whole(x) return x and x == math.floor(x) and math.abs(x) < 2^53 end
if not (whole(now) and whole(window) and window > 0) then
  return redis.error_reply("ERR fixed_window: now and window must be whole microseconds below 2^53")
end
local k = math.floor(now / window)
if k * window > now then k = k - 1 elseif (k + 1) * window <= now then k = k + 1 end
local count = tonumber(redis.call("GET", KEYS[1]) or "0")
local allowed = count + cost <= limit
if allowed or ARGV[6] == "1" then
  count = count + cost
  redis.call("SET", KEYS[1], string.format("%.17g", count), "PX", ttl_ms)
end
local next_window = (k + 1) * window - now
local reset = 0
if count > 0 then reset = next_window end
return {allowed and 1 or 0, math.floor(math.max(0, limit - count)),
        allowed and 0 or next_window, reset}
