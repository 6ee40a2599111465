package dev.ratelimit.core.docs;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.jdbc.JdbcRateLimitStore;

/**
 * The example of docs/core.md on the PostgreSQL store: building it over a data source, with its failure policy,
 * deciding, deleting idle rows now and then, and closing it.
 */
class PostgresStoreExamples {

	Decision decide(DataSource dataSource) {
		JdbcRateLimitStore store = JdbcRateLimitStore.builder(dataSource) // a pool's, such as HikariCP's
				.tableName("ratelimit_state")            // the default
				.createSchema(true)                      // the default: creates the table and functions if missing
				.failurePolicy(FailurePolicy.LOCAL)      // the default
				.timeout(Duration.ofMillis(500))         // the default
				.build();

		ScheduledExecutorService cleaner = Executors.newSingleThreadScheduledExecutor();
		cleaner.scheduleWithFixedDelay(() -> store.deleteExpired(1000), 1, 1, TimeUnit.MINUTES);

		Decision decision = store.limiter(RateLimitPolicy.of("api", Algorithm.GCRA, 10, Duration.ofSeconds(10)))
			.decide("203.0.113.7");
		cleaner.shutdown();
		store.close();
		return decision;
	}

}
