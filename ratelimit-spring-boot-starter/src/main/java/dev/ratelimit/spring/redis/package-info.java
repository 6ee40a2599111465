/**
 * The Redis store's script port implemented with Spring Data Redis, so that the store runs on whatever Redis
 * connection the application has configured: standalone, Sentinel or Cluster.
 */
@NullMarked
package dev.ratelimit.spring.redis;

import org.jspecify.annotations.NullMarked;
