package dev.ratelimit.core.jdbc;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import dev.ratelimit.core.TimeSource;

/**
 * Stores of the tests, each with keys of its own in a table shared by the run, whose schema the first store of
 * the table creates, and a timeout long enough that hundreds of calls queued on one hot row on a busy machine
 * are all decided by the database: the failure policy has tests of its own.
 */
final class TestStores {

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private static final AtomicInteger created = new AtomicInteger();

	private static final Set<String> tables = ConcurrentHashMap.newKeySet();

	private TestStores() {
	}

	/** A store on {@code table} with a key prefix of its own, deciding at the instants of {@code clock}. */
	static JdbcRateLimitStore create(DataSource dataSource, String table, TimeSource clock) {
		return builder(dataSource, table).timeSource(clock).build();
	}

	/** Long enough for any call of the tests that hold stores to exactness. */
	static final Duration PATIENT = Duration.ofSeconds(30);

	/** The builder of a store on {@code table} with a key prefix of its own. */
	static JdbcRateLimitStore.Builder builder(DataSource dataSource, String table) {
		return JdbcRateLimitStore.builder(dataSource)
			.timeout(PATIENT)
			.tableName(table)
			.createSchema(tables.add(table))
			.keyPrefix(RUN + ":" + created.incrementAndGet() + ":");
	}

}
