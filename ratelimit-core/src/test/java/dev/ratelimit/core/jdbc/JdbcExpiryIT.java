package dev.ratelimit.core.jdbc;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;
import dev.ratelimit.core.testing.PostgresExtension;
import dev.ratelimit.core.testing.TestPostgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Deleting idle state: a row goes once its key is full again, never before, never while a decision holds it, and
 * never so that a decision differs from one on a key never seen.
 */
@ExtendWith(PostgresExtension.class)
class JdbcExpiryIT {

	private static final String TABLE = "expiry_state";

	private final ManualTimeSource clock = new ManualTimeSource();

	private final String prefix = "expiry:" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36) + ":";

	private TestPostgres postgres;

	private JdbcRateLimitStore store;

	@BeforeEach
	void createStore(TestPostgres postgres) {
		this.postgres = postgres;
		this.store = TestStores.builder(postgres.dataSource(), TABLE).keyPrefix(this.prefix).timeSource(this.clock)
			.build();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void deletesTheRowsOfKeysThatAreFullAgainAndNoOthers(Algorithm algorithm) {
		RateLimitPolicy policy = RateLimitPolicy.of("idle", algorithm, 3, Duration.ofSeconds(10));
		RateLimitPolicy slow = RateLimitPolicy.of("slow", algorithm, 3, Duration.ofSeconds(100));
		RateLimitPolicy penalised = RateLimitPolicy.of("penalised", algorithm, 1, Duration.ofSeconds(10))
			.withBurst(1)
			.withPenalty(Duration.ofSeconds(100));
		for (int i = 0; i < 3; i++) {
			this.store.limiter(policy).decide("a");
			this.store.limiter(policy).decide("b");
			this.store.limiter(penalised).decide("c");
		}
		this.store.limiter(slow).decide("a");
		assertThat(rows()).isEqualTo(4);
		assertThat(this.store.deleteExpired(100)).as("nothing full yet").isZero();
		this.clock.advance(policy.fullAfter().plus(policy.window()));
		assertThat(this.store.deleteExpired(1)).as("at most the given number").isEqualTo(1);
		assertThat(this.store.deleteExpired(100)).as("the rest of the full keys").isEqualTo(1);
		assertThat(rows()).as("the slow policy's key and the penalised key").isEqualTo(2);
		assertThat(this.store.limiter(penalised).decide("c").allowed()).as("still penalised").isFalse();
		this.clock.advance(Duration.ofSeconds(200));
		assertThat(this.store.deleteExpired(100)).isEqualTo(2);
		assertThat(rows()).isZero();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void warmsUpWithoutTakingFromAnyClientAndLeavesOnlyRowsThatAreFull(Algorithm algorithm) throws Exception {
		RateLimitPolicy policy = RateLimitPolicy.of("warm-" + algorithm, algorithm, 3, Duration.ofSeconds(10));
		RateLimitPolicy other = RateLimitPolicy.of("warm-other-" + algorithm, Algorithm.FIXED_WINDOW, 2,
				Duration.ofSeconds(10));
		this.store.limiter(policy).decide("k");
		this.store.limiter(policy).decide("k");
		Decision before = this.store.inspect("k", policy);
		this.store.warmUp()
			.orElseThrow()
			.warmUp(List.of(List.of(policy), List.of(other, policy)))
			.toCompletableFuture()
			.get(10, TimeUnit.SECONDS);
		assertThat(this.store.inspect("k", policy)).as("the client's state").isEqualTo(before);
		assertThat(this.store.inspect(StateCalls.WARM_UP_KEY, policy).remaining()).isEqualTo(3);
		assertThat(this.store.deleteExpired(100)).as("the warm-up's rows, full").isEqualTo(2);
	}

	@Test
	void leavesARowThatADecisionHoldsAndDeletesItOnceReleased() throws Exception {
		RateLimitPolicy policy = RateLimitPolicy.of("held", Algorithm.FIXED_WINDOW, 3, Duration.ofSeconds(10));
		this.store.limiter(policy).decide("k");
		this.clock.advance(Duration.ofSeconds(10));
		try (Connection connection = this.postgres.dataSource().getConnection();
				Statement statement = connection.createStatement()) {
			connection.setAutoCommit(false);
			statement.execute("SELECT * FROM " + TABLE + " WHERE key = '" + this.prefix + "k' FOR UPDATE");
			assertThat(this.store.deleteExpired(100)).as("skipped, without waiting").isZero();
			connection.commit();
			connection.setAutoCommit(true);
		}
		assertThat(this.store.deleteExpired(100)).isEqualTo(1);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void decidesAsOnAKeyNeverSeenWhetherItsRowWasDeletedOrNot(Algorithm algorithm) {
		RateLimitPolicy policy = RateLimitPolicy.of("same", algorithm, 4, Duration.ofSeconds(10));
		ManualTimeSource referenceClock = new ManualTimeSource();
		RateLimiter reference = InMemoryRateLimitStore.builder().timeSource(referenceClock).build().limiter(policy);
		RateLimiter limiter = this.store.limiter(policy);
		long now = 0;
		for (int i = 0; i < 60; i++) {
			now += ThreadLocalRandom.current().nextLong(policy.fullAfter().toNanos() / 2);
			this.clock.set(now);
			referenceClock.set(now);
			if (i % 3 == 0) {
				this.store.deleteExpired(100);
			}
			Decision expected = reference.decide("k");
			assertThat(limiter.decide("k")).as("request %d", i).isEqualTo(expected);
		}
	}

	/**
	 * Rows deleted while 50 threads decide on them: every time the quota comes back, exactly the limit passes,
	 * whether a decision finds the row, a row deleted a moment ago or none.
	 */
	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void admitsExactlyTheLimitWhileIdleRowsAreDeleted(Algorithm algorithm) throws Exception {
		RateLimitPolicy policy = RateLimitPolicy.of("busy", algorithm, 10, Duration.ofSeconds(10));
		policy = (algorithm == Algorithm.LEAKY_BUCKET) ? policy.withBurst(9) : policy;
		RateLimiter limiter = this.store.limiter(policy);
		ExecutorService threads = Executors.newFixedThreadPool(51);
		AtomicBoolean deciding = new AtomicBoolean(true);
		try {
			Future<?> deleter = threads.submit(() -> {
				while (deciding.get()) {
					this.store.deleteExpired(10);
				}
				return null;
			});
			for (int round = 0; round < 3; round++) {
				this.clock.advance(policy.fullAfter().multipliedBy(2));
				CountDownLatch start = new CountDownLatch(1);
				List<Future<Integer>> results = new ArrayList<>();
				for (int thread = 0; thread < 50; thread++) {
					results.add(threads.submit(() -> {
						start.await();
						int allowed = 0;
						for (int i = 0; i < 4; i++) {
							allowed += limiter.tryAcquire("hot-" + (i % 2)) ? 1 : 0;
						}
						return allowed;
					}));
				}
				start.countDown();
				int allowed = 0;
				for (Future<Integer> result : results) {
					allowed += result.get(30, TimeUnit.SECONDS);
				}
				assertThat(allowed).as("allowed on two keys in round %d", round).isEqualTo(20);
			}
			deciding.set(false);
			deleter.get(30, TimeUnit.SECONDS);
		}
		finally {
			deciding.set(false);
			threads.shutdownNow();
		}
	}

	@Test
	void refusesToDeleteFewerThanOneRow() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.store.deleteExpired(0))
			.withMessage("max must be at least 1, was 0");
	}

	private long rows() {
		return this.postgres
			.queryForLong("SELECT count(*) FROM " + TABLE + " WHERE starts_with(key, '" + this.prefix + "')");
	}

}
