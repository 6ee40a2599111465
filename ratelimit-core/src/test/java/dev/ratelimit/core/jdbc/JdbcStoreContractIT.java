package dev.ratelimit.core.jdbc;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.StoreContractTests;
import dev.ratelimit.core.testing.OpenStores;
import dev.ratelimit.core.testing.PostgresExtension;
import dev.ratelimit.core.testing.TestPostgres;

/**
 * The store contract, unchanged, on a real PostgreSQL: each store gets keys of its own in one table, whose
 * schema the first store creates.
 */
@ExtendWith(PostgresExtension.class)
class JdbcStoreContractIT extends StoreContractTests {

	private TestPostgres postgres;

	private final OpenStores stores = new OpenStores();

	@AfterEach
	void closeStores() {
		this.stores.closeAll();
	}

	@BeforeEach
	void usePostgres(TestPostgres postgres) {
		this.postgres = postgres;
	}

	@Override
	protected RateLimitStore createStore(ManualTimeSource clock) {
		return this.stores.track(TestStores.create(this.postgres.dataSource(), "contract_state", clock));
	}

	/** A tenth of the repetitions on Redis: every decision on one hot row waits for the one before it. */
	@Override
	protected int concurrencyRepetitions() {
		return 10;
	}

}
