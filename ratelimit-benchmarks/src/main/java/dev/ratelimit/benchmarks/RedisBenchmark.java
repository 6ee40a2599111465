package dev.ratelimit.benchmarks;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * Decisions per second through a Redis on this machine ({@code -Dbench.redis.port}), each call waiting for its
 * answer: our store with each algorithm's script, Bucket4j's Lettuce backend and Spring Cloud Gateway's
 * {@code RedisRateLimiter}. A contender on Lettuce shares
 * one connection between all its threads, so that the threads are the requests in flight. A contender on Jedis
 * cannot: a Jedis connection carries one call at a time, so it takes connections from a pool of
 * {@value RedisContender#JEDIS_CONNECTIONS}, as many as the most threads any benchmark here runs, and each thread
 * holds one for the length of its call. Uncontended calls use keys of their own thread; the hot key is one key for
 * every caller.
 * <p>
 * A run in which our store fell back to its failure policy even once fails: every decision measured here was made
 * by Redis.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Benchmark)
public class RedisBenchmark {

	private static final int KEYS_PER_THREAD = 1024;

	/**
	 * Our algorithms through a plain Lettuce executor, {@code GCRA-spring} through the starter's executor on
	 * Spring Data Redis, {@code GCRA-jedis} and {@code TOKEN_BUCKET-jedis} through the starter's Jedis executor,
	 * which calls Redis on the caller's thread, Bucket4j and the gateway (see {@link RedisContender}).
	 */
	@Param({ "GCRA", "TOKEN_BUCKET", "FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_LOG", "LEAKY_BUCKET",
			"GCRA-spring", "GCRA-jedis", "TOKEN_BUCKET-jedis", "bucket4j", RedisContender.GATEWAY })
	public String contender;

	private RedisContender opened;

	private RedisContender.Limiter limiter;

	@Setup
	public void connect() {
		this.opened = RedisContender.open(this.contender, Integer.getInteger("bench.redis.port", 6379));
		this.limiter = this.opened.limiter;
	}

	@TearDown(Level.Iteration)
	public void checkEveryDecisionCameFromRedis() {
		this.opened.checkEveryDecisionCameFromRedis();
	}

	@TearDown
	public void close() throws Exception {
		this.opened.close();
	}

	@Benchmark
	@Threads(1)
	public boolean oneThread(Caller caller, Outcomes outcomes) {
		return outcomes.count(caller.next(this.limiter));
	}

	@Benchmark
	@Threads(16)
	public boolean sixteenThreads(Caller caller, Outcomes outcomes) {
		return outcomes.count(caller.next(this.limiter));
	}

	@Benchmark
	@Threads(128)
	public boolean inFlight128(Caller caller, Outcomes outcomes) {
		return outcomes.count(caller.next(this.limiter));
	}

	@Benchmark
	@Threads(64)
	public boolean hotKey64(HotKey key, Outcomes outcomes) {
		return outcomes.count(this.limiter.tryAcquire(key.key, key.bytes));
	}

	/** A caller that cycles through keys of its own, so that no two threads share a key. */
	@State(Scope.Thread)
	public static class Caller {

		private String[] keys;

		private byte[][] bytes;

		private int next;

		@Setup
		public void keys(ThreadParams thread) {
			this.keys = new String[KEYS_PER_THREAD];
			this.bytes = new byte[KEYS_PER_THREAD][];
			for (int i = 0; i < KEYS_PER_THREAD; i++) {
				this.keys[i] = "user:" + (thread.getThreadIndex() * KEYS_PER_THREAD + i);
				this.bytes[i] = this.keys[i].getBytes(StandardCharsets.UTF_8);
			}
		}

		boolean next(RedisContender.Limiter limiter) {
			int i = this.next++ & (KEYS_PER_THREAD - 1);
			return limiter.tryAcquire(this.keys[i], this.bytes[i]);
		}

	}

	/** The one key every caller asks for. */
	@State(Scope.Benchmark)
	public static class HotKey {

		final String key = "user:hot";

		final byte[] bytes = this.key.getBytes(StandardCharsets.UTF_8);

	}

}
