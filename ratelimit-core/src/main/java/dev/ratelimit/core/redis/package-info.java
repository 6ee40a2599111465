/**
 * The Redis store: every decision is one Lua script run atomically in Redis, so that a fleet of instances
 * shares one quota per key. The store reaches Redis only through the narrow
 * {@link dev.ratelimit.core.redis.RedisScriptExecutor} port, implemented by the Spring Boot starter with Spring
 * Data Redis, and falls back to a {@link dev.ratelimit.core.FailurePolicy} when Redis does not answer in time.
 * <p>
 * {@link dev.ratelimit.core.redis.RedisRateLimitStore} holds the entry points of the port and its builder; each
 * job behind them is a class of its own: {@code KeyDecisions} decides a request whose limits are on one key,
 * {@code StackDecisions} one whose limits span keys (slot by slot on a Cluster) and gives permits back,
 * {@code internal.PolicyLimiters} keeps the limiters and the runtime changes, {@code RedisFleet} the heartbeat, the
 * membership and what the fleet shares, {@code StoreFailures} what happens when Redis does not decide,
 * {@code PrefixReset} resets every client of the key prefix at once, and {@code DecisionCalls} and
 * {@code ScriptCaller} write and send the script calls.
 */
@NullMarked
package dev.ratelimit.core.redis;

import org.jspecify.annotations.NullMarked;
