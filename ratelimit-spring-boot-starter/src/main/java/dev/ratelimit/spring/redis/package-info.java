/**
 * The Redis store's script port implemented on the Redis client the application has configured through
 * Spring Data Redis, standalone, Sentinel or Cluster: asynchronously on Lettuce, on the caller's thread on
 * Jedis.
 */
@NullMarked
package dev.ratelimit.spring.redis;

import org.jspecify.annotations.NullMarked;
