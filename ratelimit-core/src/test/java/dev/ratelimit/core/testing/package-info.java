/**
 * Test support shared with the other modules through the core's test-jar: a Redis for tests (from
 * {@code REDIS_URL}, Testcontainers or a {@code redis-server} started on a loopback port), a local Redis
 * Cluster, and a Lettuce implementation of the store's script port.
 */
@NullMarked
package dev.ratelimit.core.testing;

import org.jspecify.annotations.NullMarked;
