package dev.ratelimit.core.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.ds.PGSimpleDataSource;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.testing.CountingDataSource;
import dev.ratelimit.core.testing.PostgresExtension;
import dev.ratelimit.core.testing.TestPostgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Many threads on one hot key, alone or under a stack shared with other keys, on the time source's clock and on
 * the database's: exactly the limit passes, each decision is one statement, one round trip, and so is every other
 * call of the port.
 */
@ExtendWith(PostgresExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JdbcAtomicityIT {

	private static final int THREADS = 50;

	private static final int CALLS = 200;

	private static final int REPETITIONS = 3;

	private ExecutorService threads;

	private TestPostgres postgres;

	@BeforeAll
	void startThreads() {
		this.threads = Executors.newFixedThreadPool(THREADS);
	}

	@AfterAll
	void stopThreads() {
		this.threads.shutdownNow();
	}

	@BeforeEach
	void usePostgres(TestPostgres postgres) {
		this.postgres = postgres;
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void admitsExactlyTheLimitOfConcurrentCallsOnOneKeyInOneStatementEach(Algorithm algorithm) throws Exception {
		RateLimitPolicy policy = tenAtOnce(algorithm, Duration.ofSeconds(10));
		for (int repetition = 0; repetition < REPETITIONS; repetition++) {
			CountingDataSource counting = new CountingDataSource(this.postgres.dataSource());
			RateLimitStore store = TestStores.builder(counting.dataSource(), "atomicity_state")
				.timeSource(new ManualTimeSource(Duration.ofSeconds(repetition).toNanos()))
				.build();
			long before = counting.executed();
			assertThat(concurrently(() -> store.limiter(policy).decide("hot").allowed()))
				.as("allowed in repetition %d", repetition)
				.isEqualTo(10);
			assertThat(counting.executed() - before).as("statements").isEqualTo(CALLS);
		}
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void admitsExactlyTheSharedLimitOfConcurrentStacksInOneStatementEach(Algorithm algorithm) throws Exception {
		RateLimitPolicy mine = RateLimitPolicy.of("mine", Algorithm.SLIDING_LOG, 2, Duration.ofSeconds(10));
		RateLimitPolicy shared = tenAtOnce(algorithm, Duration.ofSeconds(10));
		for (int repetition = 0; repetition < REPETITIONS; repetition++) {
			CountingDataSource counting = new CountingDataSource(this.postgres.dataSource());
			RateLimitStore store = TestStores.builder(counting.dataSource(), "atomicity_state")
				.timeSource(new ManualTimeSource(Duration.ofSeconds(repetition).toNanos()))
				.build();
			long before = counting.executed();
			int[] client = { 0 };
			assertThat(concurrently(() -> {
				String key;
				synchronized (client) {
					key = "client-" + (client[0]++ % 25);
				}
				List<Decision> decisions = store
					.decideAll(List.of(new KeyedPolicy(key, mine), new KeyedPolicy("all", shared)));
				assertThat(decisions).extracting(Decision::allowed).containsOnly(decisions.get(0).allowed());
				return decisions.get(0).allowed();
			})).as("allowed in repetition %d", repetition).isEqualTo(10);
			assertThat(counting.executed() - before).as("statements").isEqualTo(CALLS);
		}
	}

	/**
	 * Stacks that name the same two keys in opposite orders: each call locks them in one order, so none waits
	 * for another that waits for it, which PostgreSQL would break by failing one of them.
	 */
	@Test
	void neverDeadlocksOnStacksThatNameTheirKeysInOppositeOrders() throws Exception {
		RateLimitPolicy policy = RateLimitPolicy.of("both", Algorithm.GCRA, 10, Duration.ofSeconds(10));
		RateLimitStore store = TestStores.builder(this.postgres.dataSource(), "atomicity_state")
			.timeSource(new ManualTimeSource())
			.build();
		List<KeyedPolicy> forward = List.of(new KeyedPolicy("a", policy), new KeyedPolicy("b", policy));
		List<KeyedPolicy> backward = List.of(new KeyedPolicy("b", policy), new KeyedPolicy("a", policy));
		int[] calls = { 0 };
		assertThat(concurrently(() -> {
			boolean even;
			synchronized (calls) {
				even = calls[0]++ % 2 == 0;
			}
			return store.decideAll(even ? forward : backward).get(0).allowed();
		})).isEqualTo(10);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void admitsExactlyTheLimitOnTheDatabasesClock(Algorithm algorithm) throws Exception {
		// an hour's window: nothing comes back while the test runs
		RateLimitPolicy policy = tenAtOnce(algorithm, Duration.ofHours(1));
		RateLimitStore store = TestStores.builder(this.postgres.dataSource(), "atomicity_state").build();
		assertThat(concurrently(() -> store.limiter(policy).decide("hot").allowed())).isEqualTo(10);
		Decision refused = store.limiter(policy).decide("hot");
		assertThat(refused.allowed()).isFalse();
		assertThat(refused.retryAfter()).isPositive().isLessThanOrEqualTo(Duration.ofHours(1));
	}

	@Test
	void inspectsGivesBackResetsAndCarriesOverInOneStatementEach() {
		CountingDataSource counting = new CountingDataSource(this.postgres.dataSource());
		ManualTimeSource clock = new ManualTimeSource();
		RateLimitStore store = TestStores.builder(counting.dataSource(), "atomicity_state").timeSource(clock).build();
		RateLimitPolicy policy = RateLimitPolicy.of("p", Algorithm.GCRA, 10, Duration.ofSeconds(10));
		RateLimitPolicy lowered = policy.withLimit(5, Duration.ofSeconds(10));
		List<KeyedPolicy> limits = List.of(new KeyedPolicy("k", policy), new KeyedPolicy("other", policy));
		long before = counting.executed();
		List<Decision> decisions = store.decideAll(limits);
		store.inspect("k", policy);
		store.giveBack(limits, decisions);
		store.decideAll(limits);
		store.change(policy, lowered);
		Decision carried = store.limiter(lowered).decide("k");
		store.reset("k", lowered);
		store.resetAll().orElseThrow().resetAll();
		assertThat(counting.executed() - before).isEqualTo(7);
		assertThat(carried.remaining()).as("one permit carried over, one taken").isEqualTo(3);
	}

	/**
	 * Under a stricter isolation a statement reads the rows as they were before the locks it waited for, and would
	 * decide on stale state: the store refuses it loudly, whatever its failure policy, rather than decide wrongly.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "repeatable\\ read", "serializable" })
	void refusesLoudlyToDecideOnConnectionsThatAreNotReadCommitted(String isolation) {
		PGSimpleDataSource strict = new PGSimpleDataSource();
		strict.setURL(this.postgres.url());
		strict.setOptions("-c default_transaction_isolation=" + isolation);
		try (JdbcRateLimitStore store = TestStores.builder(strict, "atomicity_state").build()) {
			RateLimitPolicy policy = tenAtOnce(Algorithm.GCRA, Duration.ofSeconds(10));
			assertThatIllegalStateException().isThrownBy(() -> store.limiter(policy).decide("k"))
				.withMessageContaining("the rate limit store needs READ COMMITTED, the connection's transaction "
						+ "isolation is " + isolation.replace("\\", ""));
			assertThat(store.inFlight().orElseThrow().acquire("report", "k", 1))
				.failsWithin(Duration.ofSeconds(10))
				.withThrowableThat()
				.withMessageContaining("needs READ COMMITTED");
			assertThat(store.failures().orElseThrow().status().decisions()).as("decided by the failure policy")
				.isZero();
		}
	}

	/** Ten permits at once: the leaky bucket's queue of 9 and the request in service. */
	private static RateLimitPolicy tenAtOnce(Algorithm algorithm, Duration window) {
		RateLimitPolicy policy = RateLimitPolicy.of("hot", algorithm, 10, window);
		return (algorithm == Algorithm.LEAKY_BUCKET) ? policy.withBurst(9) : policy;
	}

	/** Makes {@value #CALLS} calls from {@value #THREADS} threads released at once; returns how many were allowed. */
	private int concurrently(Supplier<Boolean> call) throws Exception {
		CountDownLatch start = new CountDownLatch(1);
		List<Future<Integer>> results = new ArrayList<>();
		for (int thread = 0; thread < THREADS; thread++) {
			results.add(this.threads.submit(() -> {
				start.await();
				int allowed = 0;
				for (int i = 0; i < CALLS / THREADS; i++) {
					allowed += call.get() ? 1 : 0;
				}
				return allowed;
			}));
		}
		start.countDown();
		int allowed = 0;
		for (Future<Integer> result : results) {
			allowed += result.get(30, TimeUnit.SECONDS);
		}
		return allowed;
	}

}
