//! The Lua scripts the coordinator runs in Redis, each one atomic there. Times are the
//! callers' (epoch milliseconds), so every worker and test clock means the same thing.

/// Takes a call slot from a workspace's rolling window for one method, unless the
/// method is paused (Retry-After) or the window is full: at most `limit` granted calls
/// with a time in `(now - window, now]` or later.
///
/// Workers' clocks differ by a little, and their calls reach Redis in any order, so a
/// call may be asked about a moment slightly before calls already granted: granted calls
/// are kept for two windows (not one), so that a later worker's trim never drops a call
/// an earlier moment's window still holds.
///
/// KEYS: the window (a sorted set of granted calls, scored by time), the pause (the time
/// it ends). ARGV: now, window ms, limit, a member unique to this call.
/// Returns `{granted, wait_ms, paused}`.
pub const ACQUIRE: &str = r"
local now = tonumber(ARGV[1])
local paused_until = tonumber(redis.call('GET', KEYS[2]) or '0')
if paused_until > now then
  return {0, paused_until - now, 1}
end
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 2 * window)
local held = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (now - window), '+inf', 'WITHSCORES')
local limit = tonumber(ARGV[3])
if #held / 2 < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], window * 3)
  return {1, 0, 0}
end
-- Full: the call may go when enough of the held calls have left the window.
local leaving = tonumber(held[2 * (#held / 2 - limit + 1)])
local wait = leaving + window - now
if wait < 1 then
  wait = 1
end
return {0, wait, 0}
";

/// Pauses a method until a time (a Retry-After one worker was given), unless a later
/// pause is in force. KEYS: the pause. ARGV: until, ms the key lives.
pub const PAUSE: &str = r"
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > current then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
return 1
";

/// Takes a lock if free, and with it the next fencing token: one more than the last one
/// handed out, and more than both the caller's floor (the highest token that worker was
/// given) and Redis's clock in milliseconds. The floors keep tokens increasing when Redis
/// forgets its counter (a restart without persistence, a failover to a lagging replica,
/// an evicted key): a new counter starts past every token handed out before, rather
/// than at 1.
/// KEYS: the lock, its fence counter. ARGV: the holder's token, ttl ms, the floor.
/// Returns the fencing token, or 0 when the lock is held.
pub const LOCK: &str = r"
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local fence = redis.call('INCR', KEYS[2])
  local t = redis.call('TIME')
  local clock = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local floor = math.max(tonumber(ARGV[3]), clock)
  if fence <= floor then
    fence = floor + 1
    redis.call('SET', KEYS[2], string.format('%d', fence))
  end
  return fence
end
return 0
";

/// Extends a lock its holder still holds. KEYS: the lock. ARGV: token, ttl ms.
pub const EXTEND: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
";

/// Releases a lock its holder still holds. KEYS: the lock. ARGV: token.
pub const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
";
