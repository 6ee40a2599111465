package dev.ratelimit.benchmarks;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.jdbc.JdbcRateLimitStore;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.jdbc.PrimaryKeyMapper;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.postgresql.Bucket4jPostgreSQL;
import org.jspecify.annotations.Nullable;

/**
 * One contender on a PostgreSQL database, with a table of its own and a HikariCP pool of {@value #POOL_SIZE}
 * connections, the size Spring Boot gives a pool by default, whichever the contender: ours with one algorithm
 * ({@code GCRA}, {@code TOKEN_BUCKET}), or Bucket4j's PostgreSQL backend with the same limit and burst, on its
 * advisory-lock manager ({@value #BUCKET4J}, the one its documentation's examples build) or on its
 * {@code SELECT ... FOR UPDATE} manager ({@value #BUCKET4J_FOR_UPDATE}).
 * <p>
 * Both keep a row per key and the instant at which it may be deleted, indexed, so that an application can delete
 * idle rows: ours as its schema creates it, Bucket4j's with the columns its documentation gives for expiry
 * ({@code expires_at}, and {@code explicit_lock} for the advisory locks), keys as text, and the same index on
 * {@code expires_at} added. Our store gets a timeout of ten seconds, and
 * {@link #checkEveryDecisionCameFromPostgres()} fails once it decided without the database even once.
 */
final class PostgresContender implements AutoCloseable {

	/** Bucket4j's manager that serializes each key's transaction on {@code pg_advisory_xact_lock}. */
	static final String BUCKET4J = "bucket4j";

	/** Bucket4j's manager that locks each key's row with {@code SELECT ... FOR UPDATE}. */
	static final String BUCKET4J_FOR_UPDATE = "bucket4j-for-update";

	/** Connections in each contender's pool: Spring Boot's default for HikariCP. */
	static final int POOL_SIZE = 10;

	final RateLimiterCall limiter;

	private final HikariDataSource pool;

	/** Ours, or null for Bucket4j's, which holds nothing beyond the pool. */
	private final @Nullable JdbcRateLimitStore store;

	private final AtomicLong fallbacks;

	private PostgresContender(RateLimiterCall limiter, HikariDataSource pool, @Nullable JdbcRateLimitStore store,
			AtomicLong fallbacks) {
		this.limiter = limiter;
		this.pool = pool;
		this.store = store;
		this.fallbacks = fallbacks;
	}

	/**
	 * Opens {@code contender} on the database at {@code url} with an empty table, limiting as {@code policy} says:
	 * ours with the policy's algorithm, Bucket4j as a token bucket of the policy's limit, window and burst.
	 */
	static PostgresContender open(String contender, String url, RateLimitPolicy policy) {
		HikariDataSource pool = pool(url, POOL_SIZE);
		try {
			String table = table(contender);
			AtomicLong fallbacks = new AtomicLong();
			if (contender.startsWith(BUCKET4J)) {
				execute(pool, "CREATE TABLE IF NOT EXISTS " + table + " (id text PRIMARY KEY, state bytea, "
						+ "expires_at bigint, explicit_lock bigint)");
				execute(pool, "CREATE INDEX IF NOT EXISTS " + table + "_expires_at ON " + table + " (expires_at)");
				execute(pool, "TRUNCATE " + table);
				RateLimiterCall bucket4j = bucket4j(contender, pool, table, policy);
				return new PostgresContender(bucket4j, pool, null, fallbacks);
			}
			JdbcRateLimitStore store = JdbcRateLimitStore.builder(pool)
				.tableName(table)
				.timeout(Duration.ofSeconds(10))
				.onFailure((policies, cause) -> fallbacks.incrementAndGet())
				.build();
			execute(pool, "TRUNCATE " + table);
			RateLimiter ours = store.limiter(RateLimitPolicy.of(policy.name(), Algorithm.valueOf(contender),
					policy.limit(), policy.window()).withBurst(policy.burst()));
			return new PostgresContender(ours::tryAcquire, pool, store, fallbacks);
		}
		catch (RuntimeException ex) {
			pool.close();
			throw ex;
		}
	}

	/** The table of {@code contender}'s rows. */
	static String table(String contender) {
		return "bench_" + contender.toLowerCase(Locale.ROOT).replace('-', '_');
	}

	/** A HikariCP pool of {@code size} connections to {@code url}, all opened before the first call. */
	static HikariDataSource pool(String url, int size) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(url);
		config.setMaximumPoolSize(size);
		config.setMinimumIdle(size);
		config.setPoolName("bench");
		return new HikariDataSource(config);
	}

	private static RateLimiterCall bucket4j(String contender, HikariDataSource pool, String table,
			RateLimitPolicy policy) {
		ExpirationAfterWriteStrategy expiry = ExpirationAfterWriteStrategy
			.basedOnTimeForRefillingBucketUpToMax(Duration.ZERO);
		ProxyManager<String> buckets = contender.equals(BUCKET4J_FOR_UPDATE)
				? Bucket4jPostgreSQL.selectForUpdateBasedBuilder(pool)
					.primaryKeyMapper(PrimaryKeyMapper.STRING)
					.table(table)
					.expirationAfterWrite(expiry)
					.build()
				: Bucket4jPostgreSQL.advisoryLockBasedBuilder(pool)
					.primaryKeyMapper(PrimaryKeyMapper.STRING)
					.table(table)
					.expirationAfterWrite(expiry)
					.build();
		BucketConfiguration configuration = BucketConfiguration.builder()
			.addLimit(Bandwidth.builder().capacity(policy.burst()).refillGreedy(policy.limit(), policy.window()).build())
			.build();
		return (key) -> buckets.builder().build(key, () -> configuration).tryConsume(1);
	}

	static void execute(HikariDataSource pool, String sql) {
		try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
			statement.execute(sql);
		}
		catch (SQLException ex) {
			throw new IllegalStateException(sql + ": " + ex.getMessage(), ex);
		}
	}

	/** Fails if our store decided without the database since the last check: the measurement would be void. */
	void checkEveryDecisionCameFromPostgres() {
		long count = this.fallbacks.getAndSet(0);
		if (count > 0) {
			throw new IllegalStateException(count + " decisions were made without PostgreSQL: the measurement is void");
		}
	}

	@Override
	public void close() {
		// the store first: it leaves the fleet while its pool is still open
		if (this.store != null) {
			this.store.close();
		}
		this.pool.close();
	}

	/** What each contender is asked. */
	@FunctionalInterface
	interface RateLimiterCall {

		boolean tryAcquire(String key);

	}

}
