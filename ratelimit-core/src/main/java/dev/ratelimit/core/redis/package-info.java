/**
 * The Redis store: every decision is one Lua script run atomically in Redis, so that a fleet of instances
 * shares one quota per key. The store reaches Redis only through the narrow
 * {@link dev.ratelimit.core.redis.RedisScriptExecutor} port, implemented by the Spring Boot starter with Spring
 * Data Redis, and falls back to a {@link dev.ratelimit.core.redis.FailurePolicy} when Redis does not answer
 * in time.
 */
@NullMarked
package dev.ratelimit.core.redis;

import org.jspecify.annotations.NullMarked;
