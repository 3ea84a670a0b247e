-- Sliding window counter: the previous window's count, weighted by how much of it still
-- overlaps the trailing window, plus the current window's count (Cloudflare, 2017). The same
-- estimate as ratelab.limiters.sliding_counter, on the same grid: time in whole microseconds
-- (ticks), window k holds [k x window, (k+1) x window); admit iff estimate + cost <= limit.
-- KEYS[1]  the counter of window k (holding `now`)    KEYS[2]  the counter of window k - 1
-- ARGV     limit, window (ticks), now (ticks), cost, ttl_ms (how long a counter lives from its
--          last write), count_rejected (1: a refused request is counted too; else 0)
-- Returns  {allowed (1/0), remaining (whole requests of cost 1 still within the limit),
--           retry_after (ticks until this cost fits, if nothing else arrives; 0 when allowed),
--           reset_after (ticks until neither count is seen any more)}
-- Counts are written with 17 significant digits: a whole count reads as an integer.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local ttl_ms = tonumber(ARGV[5])
if not (limit and limit > 0 and cost and cost > 0 and ttl_ms and ttl_ms > 0) then
  return redis.error_reply("ERR sliding_window: limit, cost and ttl_ms must be positive numbers")
end
local function whole(x) return x and x == math.floor(x) and math.abs(x) < 2^53 end
if not (whole(now) and whole(window) and window > 0) then
  return redis.error_reply("ERR sliding_window: now and window must be whole microseconds below 2^53")
end

local function index_of(t)  -- the window holding tick t
  local k = math.floor(t / window)
  if k * window > t then k = k - 1 elseif (k + 1) * window <= t then k = k + 1 end
  return k
end
local function estimate(k, prev, cur, t)  -- prev x weight + cur at tick t, for counts of k
  local j = index_of(t)
  if j == k + 1 then prev, cur = cur, 0 elseif j ~= k then prev, cur = 0, 0 end
  return prev * (1.0 - (t - j * window) / window) + cur
end
local function first_fit(k, prev, cur)  -- the first tick at which cost fits
  local at
  if cur + cost <= limit and prev > 0 then  -- within this window, as prev fades
    at = k * window + math.ceil(window * (1.0 - (limit - cur - cost) / prev))
  else  -- in the next window, as cur fades
    local fade = 0.0
    if cur > 0 then fade = math.max(0.0, 1.0 - (limit - cost) / cur) end
    at = (k + 1) * window + math.ceil(window * fade)
  end
  local t = math.max(now, at)
  while t > now and estimate(k, prev, cur, t - 1) + cost <= limit do t = t - 1 end
  while estimate(k, prev, cur, t) + cost > limit do t = t + 1 end
  return t
end

local k = index_of(now)
local prev = tonumber(redis.call("GET", KEYS[2]) or "0")
local cur = tonumber(redis.call("GET", KEYS[1]) or "0")
local est = prev * (1.0 - (now - k * window) / window) + cur
local allowed = est + cost <= limit
if allowed or ARGV[6] == "1" then
  cur = cur + cost
  est = est + cost
  redis.call("SET", KEYS[1], string.format("%.17g", cur), "PX", ttl_ms)
end
local retry, reset = 0, 0
if not allowed then retry = first_fit(k, prev, cur) - now end
if cur > 0 then reset = (k + 2) * window - now elseif prev > 0 then reset = (k + 1) * window - now end
return {allowed and 1 or 0, math.floor(math.max(0, limit - est)), retry, reset}
