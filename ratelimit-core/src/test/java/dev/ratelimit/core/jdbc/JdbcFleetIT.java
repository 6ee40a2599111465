package dev.ratelimit.core.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.internal.FailurePolicyDecisions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three instances on one database, each with its own pool: they count each other through their heartbeats, share
 * one quota exactly while the database answers, and, when it stops in the middle of a burst, admit at most their
 * share of the limit each on top of what the database admitted.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JdbcFleetIT {

	private static final int INSTANCES = 3;

	private static final int REQUESTS = 300;

	private static final long LIMIT = 30;

	private static final String TABLE = "fleet_state";

	private static final AtomicInteger runs = new AtomicInteger();

	private OwnPostgres postgres;

	private ExecutorService threads;

	private final List<JdbcRateLimitStore> stores = new ArrayList<>();

	@BeforeAll
	void startPostgres() {
		this.postgres = OwnPostgres.startOrNull();
		this.threads = Executors.newFixedThreadPool(30);
	}

	@AfterAll
	void stopPostgres() {
		this.threads.shutdownNow();
		if (this.postgres != null) {
			this.postgres.close();
		}
	}

	@BeforeEach
	void startFleet() {
		OwnPostgres.require(this.postgres);
		ManualTimeSource clock = new ManualTimeSource();
		String prefix = "run-" + runs.incrementAndGet() + ":";
		for (int i = 0; i < INSTANCES; i++) {
			this.stores.add(JdbcRateLimitStore.builder(this.postgres.pool(10))
				.tableName(TABLE)
				.keyPrefix(prefix)
				.timeSource(clock)
				.timeout(Duration.ofSeconds(1))
				.failurePolicy(FailurePolicy.LOCAL)
				.build());
		}
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (this.stores.stream().anyMatch((store) -> store.fleet().orElseThrow().size() != INSTANCES)) {
			assertThat(System.nanoTime() - deadline).as("every instance counts the fleet").isNegative();
			Thread.onSpinWait();
		}
	}

	@AfterEach
	void stopFleet() {
		this.stores.forEach(JdbcRateLimitStore::close);
		this.stores.clear();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void admitsExactlyTheLimitAcrossTheFleet(Algorithm algorithm) throws Exception {
		RateLimitPolicy of = RateLimitPolicy.of("fleet-" + algorithm, algorithm, LIMIT, Duration.ofMinutes(1));
		// the leaky bucket admits its queue plus the request in service
		RateLimitPolicy policy = (algorithm == Algorithm.LEAKY_BUCKET) ? of.withBurst(LIMIT - 1) : of;
		List<Decision> decisions = burst(policy, REQUESTS, null, null);
		assertThat(decisions).filteredOn(Decision::allowed).hasSize((int) LIMIT).allMatch(Decision::taken);
	}

	@Test
	void admitsAtMostItsShareOnEachInstanceOnceTheDatabaseStopsMidBurst() throws Exception {
		RateLimitPolicy policy = RateLimitPolicy.of("fleet-stop", Algorithm.FIXED_WINDOW, LIMIT,
				Duration.ofMinutes(1));
		CountDownLatch decided = new CountDownLatch((int) LIMIT / 2);
		AtomicIntegerArray localAdmissions = new AtomicIntegerArray(INSTANCES);
		List<Decision> decisions;
		try {
			decisions = burst(policy, REQUESTS, decided, localAdmissions);
		}
		finally {
			this.postgres.startAgain();
		}
		long admittedByTheDatabase = decisions.stream().filter(Decision::taken).count();
		long share = FailurePolicyDecisions.ceilDiv(LIMIT, INSTANCES);
		assertThat(admittedByTheDatabase).isLessThanOrEqualTo(LIMIT);
		for (int i = 0; i < INSTANCES; i++) {
			assertThat(localAdmissions.get(i)).as("admitted by instance %d alone", i).isLessThanOrEqualTo((int) share);
		}
		assertThat(decisions.stream().filter(Decision::allowed).count())
			.isLessThanOrEqualTo(admittedByTheDatabase + INSTANCES * share);
		assertThat(this.stores.get(0).failures().orElseThrow().status().decisions()).isPositive();
	}

	/**
	 * Sends {@code requests} at once on one key, spread over the instances; once {@code decided} has counted
	 * down, if given, stops the database.
	 */
	private List<Decision> burst(RateLimitPolicy policy, int requests, @Nullable CountDownLatch decided,
			@Nullable AtomicIntegerArray localAdmissions) throws Exception {
		CountDownLatch start = new CountDownLatch(1);
		List<Future<Decision>> futures = new ArrayList<>();
		for (int i = 0; i < requests; i++) {
			int instance = i % INSTANCES;
			JdbcRateLimitStore store = this.stores.get(instance);
			futures.add(this.threads.submit(() -> {
				start.await();
				Decision decision = store.limiter(policy).decide("hot");
				if (decision.allowed() && !decision.taken() && localAdmissions != null) {
					localAdmissions.incrementAndGet(instance);
				}
				if (decided != null && decision.taken()) {
					decided.countDown();
				}
				return decision;
			}));
		}
		start.countDown();
		if (decided != null) {
			assertThat(decided.await(30, TimeUnit.SECONDS)).isTrue();
			this.postgres.stop();
		}
		List<Decision> decisions = new ArrayList<>();
		for (Future<Decision> future : futures) {
			decisions.add(future.get(60, TimeUnit.SECONDS));
		}
		return decisions;
	}

}
