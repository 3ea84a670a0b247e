-- Fixed window: admit iff the window's count plus this cost stays within the limit.
-- KEYS[1]  the window's counter (the caller names it after the calendar window)
-- ARGV     limit, ttl_ms (how long the counter lives from its first hit), cost
-- Returns  {allowed (1/0), count after this request, milliseconds the counter has left}
local limit = tonumber(ARGV[1])
local ttl_ms = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local count = tonumber(redis.call("GET", KEYS[1]) or "0")
if count + cost > limit then
  return {0, count, redis.call("PTTL", KEYS[1])}
end
count = redis.call("INCRBY", KEYS[1], cost)
if count == cost then
  redis.call("PEXPIRE", KEYS[1], ttl_ms)
end
return {1, count, redis.call("PTTL", KEYS[1])}
