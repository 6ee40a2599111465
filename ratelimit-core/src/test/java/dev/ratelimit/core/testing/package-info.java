/**
 * Test support shared with the other modules through the core's test-jar: a Redis for tests (from
 * {@code REDIS_URL}, Testcontainers or a {@code redis-server} started on a loopback port), a local Redis
 * Cluster, a Lettuce implementation of the store's script port, a scheduler on a manual clock for tests
 * that hold requests, the fleet scenario that every executor's fleet test runs, and what fault tests need: a
 * Redis process to pause, fill or demote, a proxy that makes replies late or hangs, Redis' command counts and
 * a recorder of log lines; and the pages of the documentation with their code blocks, and the public types they
 * list, for the tests that hold them against the code.
 */
@NullMarked
package dev.ratelimit.core.testing;

import org.jspecify.annotations.NullMarked;
