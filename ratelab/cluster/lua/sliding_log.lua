-- Sliding window log: one sorted-set entry per unit of cost of each logged request, scored by
-- its time; admit iff the entries in the trailing window (now - window, now] plus this cost
-- stay within the limit. Exact, at the price of memory per request. The same rule as
-- ratelab.limiters.sliding_log, on the same grid: time in whole microseconds (ticks); an entry
-- logged at tick t has left the window when now - t >= window.
-- KEYS[1]  the log (a sorted set; scores are integer ticks)
-- ARGV     limit, window (ticks), now (ticks), cost (a whole number), a member name unique to
--          this request, count_rejected (1: a refused request is logged too; else 0)
-- Returns  {allowed (1/0), remaining (whole requests of cost 1 still within the limit),
--           retry_after (ticks until enough entries have left for this cost; 0 when allowed),
--           reset_after (ticks until the log is empty)}
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local function whole(x) return x and x == math.floor(x) and math.abs(x) < 2^53 end
if not (limit and limit > 0 and whole(cost) and cost > 0) then
  return redis.error_reply("ERR sliding_log: limit must be a positive number, cost a whole one")
end
if not (whole(now) and whole(window) and window > 0) then
  return redis.error_reply("ERR sliding_log: now and window must be whole microseconds below 2^53")
end
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - window)
local count = redis.call("ZCARD", KEYS[1])
local allowed = count + cost <= limit
if allowed or ARGV[6] == "1" then
  for i = 1, cost do
    redis.call("ZADD", KEYS[1], now, ARGV[5] .. ":" .. i)
  end
  redis.call("PEXPIRE", KEYS[1], math.ceil(window / 1000))
  count = count + cost
end
local retry, reset = 0, 0
if not allowed then  -- the entry whose leaving makes room for cost (oldest leave first)
  local i = math.ceil(count + cost - limit) - 1
  local leaving = redis.call("ZRANGE", KEYS[1], i, i, "WITHSCORES")
  retry = tonumber(leaving[2]) + window - now
end
local newest = redis.call("ZRANGE", KEYS[1], -1, -1, "WITHSCORES")
if newest[2] then reset = tonumber(newest[2]) + window - now end
return {allowed and 1 or 0, math.floor(math.max(0, limit - count)), retry, reset}
