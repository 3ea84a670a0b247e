-- Token bucket in two keys, the shape of Stripe's published limiter: the token count and the
-- time it was last refilled, both rewritten on every request. The same arithmetic as
-- ratelab.limiters.token_bucket, on the same grid: time in whole microseconds (ticks), the
-- refill computed from the integer ticks elapsed, and a request less than TIE_TICKS early
-- passes (charged in full). A new key starts full.
-- KEYS[1]  tokens (a float, written with 17 significant digits: exact)
-- KEYS[2]  the tick of the last refill (an integer)
-- ARGV     rate (tokens per second), capacity (tokens), now (ticks: whole microseconds),
--          cost (tokens)
-- Returns  {allowed (1/0), remaining (whole requests of cost 1 that would still pass),
--           retry_after (ticks until this cost passes; 0 when allowed),
--           reset_after (ticks until the bucket is full)}
-- A `now` before the stored refill time (gateways' clocks differ) counts as no time elapsed,
-- and is stored as the refill time, as Stripe's script does: a gateway whose clock runs behind
-- rewinds it, and the next one ahead sees that time pass again (notebook 06 measures it).
-- TICKS_PER_S, TIE_TICKS and FLOAT_SLACK_TICKS are ratelab.clock's, put before this
-- text when the script is loaded.
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
if not (rate and rate > 0 and capacity and capacity > 0 and cost and cost > 0) then
  return redis.error_reply("ERR token_bucket: rate, capacity and cost must be positive numbers")
end
if not (now and now == math.floor(now) and math.abs(now) < 2^53) then
  return redis.error_reply("ERR token_bucket: now must be whole microseconds below 2^53")
end
local TIE = TIE_TICKS - FLOAT_SLACK_TICKS

local PER_TICK = rate / TICKS_PER_S  -- tokens one tick refills
local TIE_TOKENS = rate * TIE / TICKS_PER_S  -- tokens a tie's worth of ticks refills

local function refill(tokens, last, t)  -- tokens at tick t of a bucket holding `tokens` at last
  return math.min(capacity, tokens + (t - last) * PER_TICK)
end
local function short(tokens, c)  -- ticks of refill needed before c is there (<= 0: it is)
  return (c - tokens) * TICKS_PER_S / rate
end
local function passes(tokens, c)  -- short by less than a tie, in tokens
  return c - tokens < TIE_TOKENS
end
local function wait(tokens, c)  -- whole ticks until a bucket holding `tokens` lets c pass
  local d = math.max(0, math.floor(short(tokens, c) - TIE) + 1)
  while d > 0 and passes(refill(tokens, 0, d - 1), c) do d = d - 1 end
  while not passes(refill(tokens, 0, d), c) do d = d + 1 end
  return d
end

local last = tonumber(redis.call("GET", KEYS[2]) or now)
local tokens = tonumber(redis.call("GET", KEYS[1]) or capacity)
local have = refill(tokens, last, math.max(now, last))
local allowed = passes(have, cost)
if allowed then
  tokens = have - cost
else
  tokens = have
end
local ttl_ms = math.max(1, math.ceil(2 * capacity * 1000 / rate))
redis.call("SET", KEYS[1], string.format("%.17g", tokens), "PX", ttl_ms)
redis.call("SET", KEYS[2], string.format("%.17g", now), "PX", ttl_ms)
local remaining = math.max(0, math.ceil(tokens + TIE_TOKENS) - 1)
local retry = 0
if not allowed then
  retry = wait(tokens, cost)
end
return {allowed and 1 or 0, remaining, retry, wait(tokens, capacity)}
