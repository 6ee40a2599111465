package dev.ratelimit.core.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.testing.LettuceScriptExecutor;
import dev.ratelimit.core.testing.OpenStores;
import dev.ratelimit.core.testing.RedisServerProcess;
import dev.ratelimit.core.testing.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Redis of its own, stopped under load and paused, then back: each failure policy decides as it says
 * without an exception reaching the caller, and Redis decides again by itself once it answers.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisFailureIT {

	private final OpenStores open = new OpenStores();

	private static final RateLimitPolicy FIVE_PER_HOUR = RateLimitPolicy.of("api", Algorithm.TOKEN_BUCKET, 5,
			Duration.ofHours(1));

	/** Far longer than any decision may take: the bound only makes a hung call fail the test. */
	private static final long BOUND_SECONDS = 30;

	private @Nullable RedisServerProcess server;

	private @Nullable LettuceScriptExecutor executor;

	private final ExecutorService threads = Executors.newFixedThreadPool(8);

	/** Set by the failure listener, which runs on the deciding thread, for the decision just made. */
	private final ThreadLocal<Throwable> failure = new ThreadLocal<>();

	private final AtomicInteger failures = new AtomicInteger();

	@BeforeEach
	void startRedis() {
		if (this.server == null) {
			if (!RedisServerProcess.isAvailable()) {
				TestRedis.skipOrFail("there is no redis-server on the PATH to stop and restart");
			}
			this.server = RedisServerProcess.start();
			this.executor = LettuceScriptExecutor.standalone(this.server.uri());
		}
		this.server.restart();
		this.failures.set(0);
	}

	@AfterAll
	void stopRedis() {
		this.threads.shutdownNow();
		if (this.executor != null) {
			this.executor.close();
		}
		if (this.server != null) {
			this.server.close();
		}
	}

	private RedisRateLimitStore store(FailurePolicy failurePolicy) {
		return this.open.track(RedisRateLimitStore.builder(this.executor)
			.failurePolicy(failurePolicy)
			// every request must reach Redis or the failure policy, even on a key that Redis has denied
			.localDenials(false)
			.onFailure((policies, cause) -> {
				this.failure.set(cause);
				this.failures.incrementAndGet();
			})
			.build());
	}

	@AfterEach
	void closeStores() {
		this.open.closeAll();
	}
	@ParameterizedTest
	@EnumSource(FailurePolicy.class)
	void decidesByTheFailurePolicyWhileRedisIsStoppedUnderLoad(FailurePolicy failurePolicy) throws Exception {
		RedisRateLimitStore store = store(failurePolicy);
		RateLimiter limiter = store.limiter(FIVE_PER_HOUR);
		assertThat(limiter.decide("hot").allowed()).isTrue();
		assertThat(this.failures).hasValue(0);

		Load load = new Load(limiter);
		load.awaitDecisions(100);
		this.server.stop();
		awaitCondition(() -> load.withoutRedis.size() >= 200);
		List<Decision> withoutRedis = load.stop();

		assertThat(load.errors).isEmpty();
		switch (failurePolicy) {
			case ALLOW -> assertThat(withoutRedis).allMatch(Decision::allowed);
			case DENY -> assertThat(withoutRedis).noneMatch(Decision::allowed)
				.allMatch((decision) -> decision.retryAfterNanos() > 0);
			// Redis said the key had nothing left: the local store starts from there, not from a fresh quota
			case LOCAL -> assertThat(withoutRedis).noneMatch(Decision::allowed);
		}

		this.server.restart();
		awaitRedisDeciding(limiter);
		assertRedisLimits(limiter, "after-restart");
	}

	@Test
	void decidesByTheFailurePolicyWhenRedisDoesNotAnswerInTime() throws Exception {
		RateLimiter limiter = store(FailurePolicy.DENY).limiter(FIVE_PER_HOUR);
		assertThat(limiter.decide("client").allowed()).isTrue();
		this.server.command("CLIENT", "PAUSE", "1000", "ALL");
		Decision decision = decideWithinBound(limiter, "client");
		assertThat(decision.allowed()).isFalse();
		assertThat(this.failures).hasPositiveValue();
		awaitRedisDeciding(limiter);
		assertRedisLimits(limiter, "after-pause");
	}

	@Test
	void survivesARestartWithoutAnErrorReachingTheCaller() throws Exception {
		RateLimiter limiter = store(FailurePolicy.LOCAL).limiter(FIVE_PER_HOUR);
		int fallbacks = this.executor.noScriptFallbacks();
		assertThat(limiter.decide("client").allowed()).isTrue();
		this.server.stop();
		this.server.restart();
		awaitRedisDeciding(limiter);
		// the restarted Redis knew neither the keys nor the scripts: the client's state is restored from what the
		// store last heard, so the permit it took stays taken
		assertThat(this.executor.noScriptFallbacks()).isGreaterThan(fallbacks);
		assertRedisLimits(limiter, "client", 4);
	}

	/** Five allowed, then denied, all by Redis. */
	private void assertRedisLimits(RateLimiter limiter, String key) throws Exception {
		assertRedisLimits(limiter, key, 5);
	}

	/** {@code allowed} allowed, then denied, all by Redis. */
	private void assertRedisLimits(RateLimiter limiter, String key, int allowed) throws Exception {
		int failuresBefore = this.failures.get();
		for (int i = 0; i < allowed; i++) {
			assertThat(decideWithinBound(limiter, key).allowed()).isTrue();
		}
		Decision sixth = decideWithinBound(limiter, key);
		assertThat(sixth.allowed()).isFalse();
		assertThat(sixth.retryAfterNanos()).isGreaterThan(Duration.ofMinutes(11).toNanos());
		assertThat(this.failures).hasValue(failuresBefore);
	}

	private void awaitRedisDeciding(RateLimiter limiter) throws Exception {
		awaitCondition(() -> {
			try {
				this.threads.submit(() -> {
					this.failure.remove();
					limiter.decide("probe");
					return this.failure.get() == null;
				}).get(BOUND_SECONDS, TimeUnit.SECONDS);
				return this.threads.submit(() -> {
					this.failure.remove();
					limiter.decide("probe");
					return this.failure.get() == null;
				}).get(BOUND_SECONDS, TimeUnit.SECONDS);
			}
			catch (Exception ex) {
				throw new AssertionError(ex);
			}
		});
	}

	private Decision decideWithinBound(RateLimiter limiter, String key) throws Exception {
		return this.threads.submit(() -> limiter.decide(key)).get(BOUND_SECONDS, TimeUnit.SECONDS);
	}

	/** Polls until the condition holds; waits on Redis and its client, never on limiter time. */
	private static void awaitCondition(BooleanSupplier condition) throws Exception {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(BOUND_SECONDS);
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() - deadline > 0) {
				throw new TimeoutException("Condition not met within " + BOUND_SECONDS + " s");
			}
			Thread.sleep(20);
		}
	}

	/** Four threads deciding requests of one key without pause, sorting decisions by who made them. */
	private final class Load {

		final ConcurrentLinkedQueue<Decision> withRedis = new ConcurrentLinkedQueue<>();

		final ConcurrentLinkedQueue<Decision> withoutRedis = new ConcurrentLinkedQueue<>();

		final ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();

		private final AtomicBoolean running = new AtomicBoolean(true);

		private final List<Future<?>> workers = new ArrayList<>();

		Load(RateLimiter limiter) {
			CountDownLatch started = new CountDownLatch(4);
			for (int i = 0; i < 4; i++) {
				this.workers.add(RedisFailureIT.this.threads.submit(() -> {
					started.countDown();
					while (this.running.get()) {
						RedisFailureIT.this.failure.remove();
						try {
							Decision decision = limiter.decide("hot");
							(RedisFailureIT.this.failure.get() == null ? this.withRedis : this.withoutRedis)
								.add(decision);
						}
						catch (Throwable ex) {
							this.errors.add(ex);
						}
					}
				}));
			}
		}

		void awaitDecisions(int count) throws Exception {
			awaitCondition(() -> this.withRedis.size() >= count);
		}

		List<Decision> stop() throws Exception {
			this.running.set(false);
			for (Future<?> worker : this.workers) {
				worker.get(BOUND_SECONDS, TimeUnit.SECONDS);
			}
			return List.copyOf(this.withoutRedis);
		}

	}

}
