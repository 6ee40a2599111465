package dev.ratelimit.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.redis.RedisScriptExecutor;
import dev.ratelimit.spring.redis.JedisScriptExecutor;
import dev.ratelimit.spring.redis.SpringDataRedisScriptExecutor;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
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
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.JedisPooled;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Decisions per second through a Redis on this machine ({@code -Dbench.redis.port}), each call waiting for its
 * answer: our store with each algorithm's script, and Bucket4j's Lettuce backend. A contender on Lettuce shares
 * one connection between all its threads, so that the threads are the requests in flight. A contender on Jedis
 * cannot: a Jedis connection carries one call at a time, so it takes connections from a pool of
 * {@value #JEDIS_CONNECTIONS}, as many as the most threads any benchmark here runs, and each thread holds one for
 * the length of its call. Uncontended calls use keys of their own thread; the hot key is one key for every
 * caller.
 * <p>
 * Our store is given a timeout of ten seconds, and a run in which it fell back to its failure policy even once
 * fails: every decision measured here was made by Redis.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Benchmark)
public class RedisBenchmark {

	private static final int KEYS_PER_THREAD = 1024;

	/** The most threads of any benchmark here, so that no Jedis caller waits for a connection. */
	static final int JEDIS_CONNECTIONS = 128;

	/**
	 * Our algorithms through a plain Lettuce executor, {@code GCRA-spring} through the starter's executor on
	 * Spring Data Redis, {@code GCRA-jedis} and {@code TOKEN_BUCKET-jedis} through the starter's Jedis executor,
	 * which calls Redis on the caller's thread, and Bucket4j.
	 */
	@Param({ "GCRA", "TOKEN_BUCKET", "FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_LOG", "LEAKY_BUCKET",
			"GCRA-spring", "GCRA-jedis", "TOKEN_BUCKET-jedis", "bucket4j" })
	public String contender;

	private LettuceConnectionFactory springConnections;

	private JedisPooled jedis;

	private RedisClient client;

	private StatefulRedisConnection<String, String> connection;

	private Limiter limiter;

	private final AtomicLong fallbacks = new AtomicLong();

	@Setup
	public void connect() {
		RedisURI uri = RedisURI.create("127.0.0.1", Integer.getInteger("bench.redis.port", 6379));
		this.client = RedisClient.create(uri);
		RateLimitPolicy policy = Load.ALLOWED.policy(Algorithm.TOKEN_BUCKET);
		if (this.contender.equals("bucket4j")) {
			this.limiter = bucket4j(this.client, policy);
		}
		else {
			RedisScriptExecutor executor;
			if (this.contender.endsWith("-spring")) {
				this.springConnections = new LettuceConnectionFactory(
						new RedisStandaloneConfiguration("127.0.0.1", uri.getPort()));
				this.springConnections.afterPropertiesSet();
				this.springConnections.start();
				executor = new SpringDataRedisScriptExecutor(this.springConnections);
			}
			else if (this.contender.endsWith("-jedis")) {
				this.jedis = jedis(uri.getPort());
				executor = new JedisScriptExecutor(this.jedis);
			}
			else {
				this.connection = this.client.connect();
				executor = new LettuceExecutor(this.connection.async());
			}
			String algorithm = this.contender.replace("-spring", "").replace("-jedis", "");
			dev.ratelimit.core.RateLimiter ours = RedisRateLimitStore.builder(executor)
				.timeout(Duration.ofSeconds(10))
				.onFailure((policies, cause) -> this.fallbacks.incrementAndGet())
				.build()
				.limiter(Load.ALLOWED.policy(Algorithm.valueOf(algorithm)));
			this.limiter = (key, bytes) -> ours.tryAcquire(key);
		}
	}

	private static JedisPooled jedis(int port) {
		ConnectionPoolConfig pool = new ConnectionPoolConfig();
		pool.setMaxTotal(JEDIS_CONNECTIONS);
		// with the default of at most eight idle connections, more callers than that would close connections as they
		// return them and open new ones
		pool.setMaxIdle(JEDIS_CONNECTIONS);
		// a blocking call is bounded by its socket, not by the store: give it the store's ten seconds
		return new JedisPooled(pool, "127.0.0.1", port, 10_000);
	}

	private static Limiter bucket4j(RedisClient client, RateLimitPolicy policy) {
		ProxyManager<byte[]> buckets = Bucket4jLettuce.casBasedBuilder(client)
			.expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(1)))
			.build();
		BucketConfiguration configuration = BucketConfiguration.builder()
			.addLimit(Bandwidth.builder().capacity(policy.burst()).refillGreedy(policy.limit(), policy.window()).build())
			.build();
		return (key, bytes) -> {
			BucketProxy bucket = buckets.builder().build(bytes, () -> configuration);
			return bucket.tryConsume(1);
		};
	}

	@TearDown(Level.Iteration)
	public void checkEveryDecisionCameFromRedis() {
		long count = this.fallbacks.getAndSet(0);
		if (count > 0) {
			throw new IllegalStateException(count + " decisions were made without Redis: the measurement is void");
		}
	}

	@TearDown
	public void close() {
		if (this.connection != null) {
			this.connection.close();
		}
		if (this.springConnections != null) {
			this.springConnections.destroy();
		}
		if (this.jedis != null) {
			this.jedis.close();
		}
		this.client.shutdown();
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

	/** What each contender is asked; Bucket4j's keys are bytes, encoded once beforehand. */
	@FunctionalInterface
	interface Limiter {

		boolean tryAcquire(String key, byte[] bytes);

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

		boolean next(Limiter limiter) {
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
