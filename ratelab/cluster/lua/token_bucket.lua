-- Token bucket in two keys, the shape of Stripe's published limiter: the token count and the
-- time it was last refilled, both rewritten on every request.
-- KEYS[1]  tokens    KEYS[2]  last refill time
-- ARGV     rate (tokens per second), capacity, now (seconds), requested
-- Returns  {allowed (1/0), tokens left, rounded down}
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local requested = tonumber(ARGV[4])
local ttl = math.max(1, math.ceil(2 * capacity / rate))
local last_tokens = tonumber(redis.call("GET", KEYS[1]) or capacity)
local last_refill = tonumber(redis.call("GET", KEYS[2]) or "0")
local elapsed = math.max(0, now - last_refill)
local filled = math.min(capacity, last_tokens + elapsed * rate)
local allowed = filled >= requested
local tokens = filled
if allowed then
  tokens = filled - requested
end
redis.call("SET", KEYS[1], tokens, "EX", ttl)
redis.call("SET", KEYS[2], now, "EX", ttl)
return {allowed and 1 or 0, math.floor(tokens)}
