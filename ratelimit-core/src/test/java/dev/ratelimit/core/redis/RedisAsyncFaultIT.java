package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.internal.OutageDetector;
import dev.ratelimit.core.testing.CommandStats;
import dev.ratelimit.core.testing.DelayingProxy;
import dev.ratelimit.core.testing.LettuceScriptExecutor;
import dev.ratelimit.core.testing.LogRecorder;
import dev.ratelimit.core.testing.RedisServerProcess;
import dev.ratelimit.core.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The asynchronous path through faults of a real {@code redis-server} of its own: hung ({@code SIGSTOP}),
 * killed ({@code SIGKILL}) and restarted, or answering late through a proxy. Each decision returns its stage to
 * the caller without waiting for Redis and completes with the failure policy's decision within the timeout and
 * 50 ms; the store switches to the failure policy after consecutive failures, sends one probe at a time while it
 * fails, and goes back to Redis by itself once Redis answers; and nothing the store gave up on runs in Redis
 * afterwards: Redis writes once per permit it grants after the fault, and never for a call given up on.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisAsyncFaultIT {

	private static final Duration TIMEOUT = Duration.ofMillis(100);

	/** What a decision may take beyond the timeout: the store's promise. */
	private static final Duration LATENCY_SLACK = Duration.ofMillis(50);

	/** Far longer than any decision may take: the bound only makes a hung stage fail the test. */
	private static final long BOUND_SECONDS = 10;

	/** Never exhausted within a test: every decision Redis makes allows, every one of the failure policy denies. */
	private static final RateLimitPolicy POLICY = RateLimitPolicy.of("api", Algorithm.GCRA, 1_000_000,
			Duration.ofHours(1));

	private final AtomicInteger byFailurePolicy = new AtomicInteger();

	enum Fault {

		/** The server is stopped with {@code SIGSTOP}: connections stay open, nothing is read or answered. */
		HUNG,

		/** The server is killed with {@code SIGKILL} and restarted empty on the same port. */
		KILLED,

		/** Every reply arrives 300 ms late through a proxy: Redis runs each call on time. */
		LATE_REPLIES

	}

	@BeforeEach
	void needsRedisServer() {
		if (!RedisServerProcess.isAvailable()) {
			TestRedis.skipOrFail("there is no redis-server on the PATH to break");
		}
	}

	@BeforeAll
	// the log recorder only keeps the failure's lines out of the output while the store fails
	@SuppressWarnings("try")
	void loadTheFailurePath() throws Exception {
		// the JVM's first timeout also loads the classes of the failure path: not what the bound is about
		try (LogRecorder log = LogRecorder.record(RedisRateLimitStore.class.getName());
				RedisRateLimitStore store = RedisRateLimitStore
					.builder((sha1, script, keys, args) -> new CompletableFuture<>())
					.timeout(Duration.ofMillis(1))
					.failurePolicy(FailurePolicy.DENY)
					.build()) {
			store.decideAllAsync(List.of(new KeyedPolicy("warm-up", POLICY))).toCompletableFuture()
				.get(BOUND_SECONDS, TimeUnit.SECONDS);
		}
	}

	@ParameterizedTest
	@EnumSource(Fault.class)
	void decidesWithoutWaitingThroughTheFaultAndNothingGivenUpOnRunsLater(Fault fault) throws Exception {
		try (RedisServerProcess server = RedisServerProcess.start();
				DelayingProxy proxy = DelayingProxy.start(server.port());
				LettuceScriptExecutor executor = LettuceScriptExecutor
					.standalone((fault == Fault.LATE_REPLIES) ? proxy.uri() : server.uri());
				RedisRateLimitStore store = RedisRateLimitStore.builder(executor)
					.timeout(TIMEOUT)
					.maxWait(TIMEOUT)
					.failurePolicy(FailurePolicy.DENY)
					// every request must reach Redis or the failure policy
					.localDenials(false)
					.onFailure((policies, cause) -> this.byFailurePolicy.incrementAndGet())
					.build()) {
			// the heartbeat tells the store Redis' clock, which every call's deadline is written in
			store.warmUp()
				.orElseThrow()
				.warmUp(List.of(List.of(POLICY)))
				.toCompletableFuture()
				.get(BOUND_SECONDS, TimeUnit.SECONDS);
			assertThat(decide(store, "before").decision.allowed()).as("decided by Redis").isTrue();
			long writesBefore = writes(server);
			this.byFailurePolicy.set(0);

			breakRedis(fault, server, proxy);
			int failed = 0;
			while (!store.failures().orElseThrow().status().failing()) {
				assertThat(failed).as("decisions before the store switched").isLessThan(20);
				Outcome outcome = decide(store, "client");
				if (fault != Fault.KILLED) {
					assertThat(outcome.doneOnReturn).as("complete before Redis could answer").isFalse();
				}
				assertThat(outcome.decision.allowed()).as("denied by the failure policy").isFalse();
				assertThat(outcome.took()).as("decision %d", failed).isLessThan(TIMEOUT.plus(LATENCY_SLACK));
				failed++;
			}
			assertThat(failed).as("consecutive failures before the switch")
				.isGreaterThanOrEqualTo(OutageDetector.FAILURES_TO_SWITCH);

			// one decision at a time probes Redis; the others take the failure policy at once
			Outcome probe = send(store, "client");
			Outcome meanwhile = send(store, "client");
			if (fault != Fault.KILLED) {
				assertThat(probe.doneOnReturn).as("the probe waits for Redis").isFalse();
			}
			assertThat(meanwhile.doneOnReturn).as("decided without Redis while the probe is out").isTrue();
			assertThat(meanwhile.await().decision.allowed()).isFalse();
			assertThat(probe.await().decision.allowed()).isFalse();
			assertThat(probe.took()).isLessThan(TIMEOUT.plus(LATENCY_SLACK));
			assertThat(this.byFailurePolicy).hasValue(failed + 2);

			heal(fault, server, proxy);
			// a hung Redis ran nothing; a late one ran every call on time, given up on or not, before it healed
			long writesAtHeal = switch (fault) {
				case HUNG -> writesBefore;
				case KILLED -> 0;
				case LATE_REPLIES -> writes(server);
			};
			int allowedAfter = 0;
			long recovering = System.nanoTime();
			while (store.failures().orElseThrow().status().failing() || allowedAfter == 0) {
				assertThat(System.nanoTime() - recovering).as("time to decide by Redis again")
					.isLessThan(TimeUnit.SECONDS.toNanos(BOUND_SECONDS));
				Outcome outcome = decide(store, "after");
				allowedAfter += outcome.decision.allowed() ? 1 : 0;
				if (!outcome.decision.allowed()) {
					// waits on Redis and its client's reconnection, never on limiter time
					Thread.sleep(20);
				}
			}
			assertThat(store.failures().orElseThrow().status().failing()).isFalse();
			// quiet: a call the store gave up on, held by the hung Redis or its client, may only run now
			Thread.sleep(300);
			assertThat(writes(server) - writesAtHeal).as("writes in Redis after the fault, one per permit it granted")
				.isEqualTo(allowedAfter);
		}
	}

	private static Outcome decide(RedisRateLimitStore store, String key) throws Exception {
		return send(store, key).await();
	}

	/** Asks for a decision and notes whether its stage came back complete, and when it completed. */
	private static Outcome send(RedisRateLimitStore store, String key) {
		long start = System.nanoTime();
		CompletableFuture<List<Decision>> stage = store.decideAllAsync(List.of(new KeyedPolicy(key, POLICY)))
			.toCompletableFuture();
		boolean doneOnReturn = stage.isDone();
		return new Outcome(stage, start, doneOnReturn, stage.handle((decisions, ex) -> System.nanoTime()), null);
	}

	private static void breakRedis(Fault fault, RedisServerProcess server, DelayingProxy proxy) {
		switch (fault) {
			case HUNG -> server.pause();
			case KILLED -> server.kill();
			case LATE_REPLIES -> proxy.delayReplies(Duration.ofMillis(300));
		}
	}

	private static void heal(Fault fault, RedisServerProcess server, DelayingProxy proxy) {
		switch (fault) {
			case HUNG -> server.resume();
			case KILLED -> server.restart();
			case LATE_REPLIES -> proxy.resume();
		}
	}

	private static long writes(RedisServerProcess server) {
		try (RedisClient client = RedisClient.create(server.uri());
				StatefulRedisConnection<String, String> connection = client.connect()) {
			// the decision scripts write with SET, the heartbeat with ZADD
			return CommandStats.read(connection.sync()).calls("set");
		}
	}

	/** One decision: its stage, when it was asked for, whether it came back complete, and when it completed. */
	private record Outcome(CompletableFuture<List<Decision>> stage, long startNanos, boolean doneOnReturn,
			CompletableFuture<Long> completedNanos, Decision decision) {

		Outcome await() throws Exception {
			List<Decision> decisions = this.stage.get(BOUND_SECONDS, TimeUnit.SECONDS);
			return new Outcome(this.stage, this.startNanos, this.doneOnReturn, this.completedNanos,
					decisions.get(0));
		}

		/** From the request to the completion of its stage, on whichever thread completed it. */
		Duration took() throws Exception {
			return Duration.ofNanos(this.completedNanos.get(BOUND_SECONDS, TimeUnit.SECONDS) - this.startNanos);
		}

	}

}
