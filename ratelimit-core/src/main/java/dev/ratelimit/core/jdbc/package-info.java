/**
 * The PostgreSQL store: every decision is one call of a PL/pgSQL function that locks the rows of its keys,
 * decides as the other stores do and writes them back, one round trip and one transaction, so that instances
 * sharing a database share one quota per key.
 * <p>
 * {@link dev.ratelimit.core.jdbc.JdbcRateLimitStore} holds the entry points of the port and its builder;
 * {@code StateCalls} writes the calls and reads their replies, {@code BoundedCalls} runs each within the timeout,
 * {@code DatabaseFailures} decides by the failure policy when the database does not, {@code DatabaseFleet} writes
 * the heartbeat and counts the fleet, {@code internal.PolicyLimiters} keeps the limiters and the runtime changes, and
 * {@code StateSchema} creates the tables and the functions from {@code META-INF/ratelimit/sql/schema.sql}.
 */
@NullMarked
package dev.ratelimit.core.jdbc;

import org.jspecify.annotations.NullMarked;
