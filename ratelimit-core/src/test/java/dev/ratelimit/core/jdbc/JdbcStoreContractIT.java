package dev.ratelimit.core.jdbc;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.StoreContractTests;
import dev.ratelimit.core.testing.PostgresExtension;
import dev.ratelimit.core.testing.TestPostgres;

/**
 * The store contract, unchanged, on a real PostgreSQL: each store gets keys of its own in one table, whose
 * schema the first store creates.
 */
@ExtendWith(PostgresExtension.class)
class JdbcStoreContractIT extends StoreContractTests {

	private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private static final AtomicInteger created = new AtomicInteger();

	private TestPostgres postgres;

	@BeforeEach
	void usePostgres(TestPostgres postgres) {
		this.postgres = postgres;
	}

	@Override
	protected RateLimitStore createStore(ManualTimeSource clock) {
		int store = created.incrementAndGet();
		return JdbcRateLimitStore.builder(this.postgres.dataSource())
			.tableName("contract_state")
			.createSchema(store == 1)
			.keyPrefix(RUN + ":" + store + ":")
			.timeSource(clock)
			.build();
	}

	/** A tenth of the repetitions on Redis: every decision on one hot row waits for the one before it. */
	@Override
	protected int concurrencyRepetitions() {
		return 10;
	}

}
