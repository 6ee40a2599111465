/**
 * The Redis store's script port implemented on a client of its own for the Redis the application has configured
 * through Spring Data Redis, standalone, Sentinel or Cluster: asynchronously on Lettuce, on the caller's thread
 * on Jedis; either reports the calls it did not send, and sends none of them later.
 */
@NullMarked
package dev.ratelimit.spring.redis;

import org.jspecify.annotations.NullMarked;
