-- Sliding window counter: the previous window's count, weighted by how much of it still
-- overlaps the trailing window, plus the current window's count (Cloudflare, 2017).
-- KEYS[1]  the current window's counter    KEYS[2]  the previous window's counter
-- ARGV     limit, window_s, now (seconds), cost
-- Returns  {allowed (1/0), the estimate after this request, rounded down}
local limit = tonumber(ARGV[1])
local window_s = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local elapsed = now - math.floor(now / window_s) * window_s
local previous = tonumber(redis.call("GET", KEYS[2]) or "0")
local current = tonumber(redis.call("GET", KEYS[1]) or "0")
local estimate = previous * (1 - elapsed / window_s) + current + cost
if estimate > limit then
  return {0, math.floor(estimate - cost)}
end
redis.call("INCRBY", KEYS[1], cost)
redis.call("PEXPIRE", KEYS[1], math.ceil(2 * window_s * 1000))
return {1, math.floor(estimate)}
