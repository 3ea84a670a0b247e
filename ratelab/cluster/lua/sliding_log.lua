-- Sliding window log: one sorted-set entry per admitted request, scored by its time; admit
-- iff the entries in the trailing window (now - window, now] plus this cost stay within the
-- limit. Exact, at the price of memory per request.
-- KEYS[1]  the log (a sorted set)
-- ARGV     limit, window_s, now (seconds), a unique member name for this request
-- Returns  {allowed (1/0), entries in the window after this request}
local limit = tonumber(ARGV[1])
local window_s = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - window_s)
local count = redis.call("ZCARD", KEYS[1])
if count + 1 > limit then
  return {0, count}
end
redis.call("ZADD", KEYS[1], now, ARGV[4])
redis.call("PEXPIRE", KEYS[1], math.ceil(window_s * 1000))
return {1, count + 1}
