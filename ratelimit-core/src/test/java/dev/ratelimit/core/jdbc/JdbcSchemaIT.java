package dev.ratelimit.core.jdbc;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.testing.PostgresExtension;
import dev.ratelimit.core.testing.TestPostgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The schema: created by the stores that start at once on an empty database, or by the application from the
 * file in the jar, under a schema-qualified name; a store told not to create it fails clearly without it. Each
 * test works in a database schema of its own, dropped afterwards.
 */
@ExtendWith(PostgresExtension.class)
class JdbcSchemaIT {

	private static final RateLimitPolicy POLICY = RateLimitPolicy.of("p", Algorithm.GCRA, 2, Duration.ofSeconds(10));

	private final String schema = "ratelimit_" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);

	private TestPostgres postgres;

	@BeforeEach
	void createSchema(TestPostgres postgres) {
		this.postgres = postgres;
		postgres.execute("CREATE SCHEMA " + this.schema);
	}

	@AfterEach
	void dropSchema() {
		this.postgres.execute("DROP SCHEMA " + this.schema + " CASCADE");
	}

	@Test
	void createsItsSchemaOnceWhenStoresStartAtOnce() throws Exception {
		String table = this.schema + ".started_state";
		ExecutorService threads = Executors.newFixedThreadPool(8);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<RateLimitStore>> stores = new ArrayList<>();
			for (int i = 0; i < 8; i++) {
				stores.add(threads.submit(() -> {
					start.await();
					return JdbcRateLimitStore.builder(this.postgres.dataSource()).tableName(table).build();
				}));
			}
			start.countDown();
			int allowed = 0;
			for (Future<RateLimitStore> store : stores) {
				allowed += store.get(30, TimeUnit.SECONDS).limiter(POLICY).tryAcquire("k") ? 1 : 0;
			}
			assertThat(allowed).as("one quota, however many stores").isEqualTo(2);
		}
		finally {
			threads.shutdownNow();
		}
	}

	@Test
	void decidesOnTheSchemaThatAMigrationCreatesFromTheFileInTheJar() throws Exception {
		String table = this.schema + ".migrated_state";
		Path file = Path.of("target", "classes", "META-INF", "ratelimit", "sql", "schema.sql");
		this.postgres.execute(Files.readString(file, StandardCharsets.UTF_8).replace("${table}", table));
		RateLimitStore store = JdbcRateLimitStore.builder(this.postgres.dataSource())
			.tableName(table)
			.createSchema(false)
			.build();
		assertThat(store.limiter(POLICY).tryAcquire("k", 2)).isTrue();
		assertThat(store.limiter(POLICY).tryAcquire("k")).isFalse();
		assertThat(this.postgres.queryForLong("SELECT count(*) FROM " + table)).isEqualTo(1);
		assertThat(this.postgres.queryForLong("SELECT count(*) FROM pg_indexes WHERE schemaname = '" + this.schema
				+ "' AND indexname = 'migrated_state_expires_at'")).as("the index on expires_at").isEqualTo(1);
	}

	@Test
	void failsEveryDecisionWithoutItsSchemaWhenToldNotToCreateIt() {
		RateLimitStore store = JdbcRateLimitStore.builder(this.postgres.dataSource())
			.tableName(this.schema + ".missing_state")
			.createSchema(false)
			.build();
		assertThatIllegalStateException().isThrownBy(() -> store.limiter(POLICY).decide("k"))
			.withMessageContaining("missing_state_decide");
	}

}
