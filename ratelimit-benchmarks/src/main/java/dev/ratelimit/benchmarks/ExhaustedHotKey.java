package dev.ratelimit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;

/**
 * One key its policy has exhausted, asked by {@value #CALLERS} callers at once through our store on one shared
 * Lettuce connection, with the store's local denial and without it: the decisions per second over a fixed time,
 * and the scripts Redis ran meanwhile, counted in {@code INFO commandstats}. With the local denial a request that
 * Redis has denied is denied again without a call until the retry-after Redis gave, so the key should cost Redis
 * next to nothing; without it every request is a script call.
 * <p>
 * A run in which a request was allowed after the key was exhausted, or the store decided without Redis, fails:
 * every decision measured is Redis' denial, made by Redis or kept from it.
 */
final class ExhaustedHotKey {

	static final int CALLERS = 64;

	/**
	 * Ten requests in ten minutes: once the first ten are taken, GCRA allows the next one a minute later, far
	 * beyond a run, so that every decision of the run is a denial.
	 */
	static final RateLimitPolicy POLICY = RateLimitPolicy.of("exhausted", Algorithm.GCRA, 10, Duration.ofMinutes(10));

	static final Duration WARMUP = Duration.ofSeconds(1);

	private static final String KEY = "user:exhausted";

	/** The most decisions of one caller in one stretch, far more than it makes in the time. */
	private static final long MOST_PER_CALLER = 100_000_000;

	/** How long a stretch may overrun its time: a caller finishes its last call, bounded by the store's timeout. */
	private static final Duration OVERRUN = Duration.ofSeconds(30);

	private ExhaustedHotKey() {
	}

	/**
	 * Measures both runs one after the other, the one with the local denial first in even rounds, each on a key
	 * exhausted just before it and after {@link #WARMUP} of untimed calls.
	 * @param redis the Redis to run against, whose keys are flushed before each run
	 * @param round the round, which tells which run goes first
	 * @param measured how long each run is timed
	 * @return both runs
	 */
	static Round measure(RedisServer redis, int round, Duration measured) throws Exception {
		boolean localFirst = round % 2 == 0;
		Run first = run(redis, localFirst, measured);
		Run second = run(redis, !localFirst, measured);
		return localFirst ? new Round(first, second) : new Round(second, first);
	}

	private static Run run(RedisServer redis, boolean localDenials, Duration measured) throws Exception {
		redis.command("FLUSHALL");
		AtomicLong fallbacks = new AtomicLong();
		RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", redis.port));
		ExecutorService pool = Executors.newFixedThreadPool(CALLERS);
		try (StatefulRedisConnection<String, String> connection = client.connect();
				RedisRateLimitStore store = RedisRateLimitStore.builder(new LettuceExecutor(connection.async()))
					.timeout(Duration.ofSeconds(10))
					.onFailure((policies, cause) -> fallbacks.incrementAndGet())
					.localDenials(localDenials)
					.build()) {
			RateLimiter limiter = store.limiter(POLICY);
			for (long i = 0; i < POLICY.limit(); i++) {
				if (!limiter.tryAcquire(KEY)) {
					throw new IllegalStateException("request " + (i + 1) + " of " + POLICY.limit()
							+ " was denied on a key nobody had asked for");
				}
			}
			stretch(pool, limiter, WARMUP);
			long callsBefore = redis.scriptCalls();
			Stretch timed = stretch(pool, limiter, measured);
			long calls = redis.scriptCalls() - callsBefore;
			if (fallbacks.get() > 0) {
				throw new IllegalStateException(fallbacks.get() + " decisions were made without Redis: the "
						+ "measurement is void");
			}
			System.out.println(String.format(Locale.ROOT,
					"exhausted hot key, local denials %s: %,d requests, %,d Redis calls, %,.0f decisions/s",
					localDenials ? "on" : "off", timed.decisions, calls, timed.perSecond()));
			return new Run(timed.decisions, calls, timed.perSecond());
		}
		finally {
			pool.shutdownNow();
			client.shutdown();
		}
	}

	/** Has every caller ask for the key until {@code duration} has passed, all of them starting together. */
	private static Stretch stretch(ExecutorService pool, RateLimiter limiter, Duration duration) throws Exception {
		CountDownLatch ready = new CountDownLatch(CALLERS);
		CountDownLatch go = new CountDownLatch(1);
		AtomicLong deadline = new AtomicLong();
		List<Future<Long>> callers = new ArrayList<>();
		for (int t = 0; t < CALLERS; t++) {
			callers.add(pool.submit(() -> {
				ready.countDown();
				go.await();
				long end = deadline.get();
				long decisions = 0;
				while (decisions < MOST_PER_CALLER && System.nanoTime() - end < 0) {
					if (limiter.tryAcquire(KEY)) {
						throw new IllegalStateException("a request on the exhausted key was allowed");
					}
					decisions++;
				}
				return decisions;
			}));
		}
		if (!ready.await(OVERRUN.toSeconds(), TimeUnit.SECONDS)) {
			throw new IllegalStateException("the " + CALLERS + " callers did not start");
		}
		long start = System.nanoTime();
		deadline.set(start + duration.toNanos());
		go.countDown();
		long bound = deadline.get() + OVERRUN.toNanos();
		long decisions = 0;
		for (Future<Long> caller : callers) {
			decisions += caller.get(Math.max(0, bound - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		return new Stretch(decisions, System.nanoTime() - start);
	}

	/**
	 * The decisions of every caller in one stretch.
	 * @param decisions how many
	 * @param nanos from the start of every caller to the end of the last one's last call
	 */
	private record Stretch(long decisions, long nanos) {

		double perSecond() {
			return this.decisions * 1e9 / this.nanos;
		}

	}

	/**
	 * One timed run.
	 * @param requests the decisions made in it, every one a denial
	 * @param redisCalls the scripts Redis ran meanwhile ({@code EVALSHA} and {@code EVAL}), the store's heartbeat
	 * included
	 * @param perSecond decisions per second
	 */
	record Run(long requests, long redisCalls, double perSecond) {

		/** Requests per Redis call: infinite when Redis ran no script at all. */
		double requestsPerCall() {
			return (this.redisCalls == 0) ? Double.POSITIVE_INFINITY : this.requests / (double) this.redisCalls;
		}

	}

	/**
	 * Both runs of one round.
	 * @param local with the local denial, the store's default
	 * @param redisOnly without it, every request a script call
	 */
	record Round(Run local, Run redisOnly) {

		/** The decisions per second with the local denial over those without it. */
		double ratio() {
			return this.local.perSecond() / this.redisOnly.perSecond();
		}

	}

}
