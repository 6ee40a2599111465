package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.JedisPooled;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * One contender on the Redis at 127.0.0.1:{@code port}, with connections of its own, under the ALLOWED load:
 * ours with one algorithm's script through a plain Lettuce executor, {@code <algorithm>-spring} through the
 * starter's Spring Data Redis executor, {@code <algorithm>-jedis} through the starter's Jedis executor, Bucket4j's
 * Lettuce backend with the same limit and burst, Spring Cloud Gateway's {@code RedisRateLimiter} ({@value #GATEWAY})
 * with the same rate and the nearest burst it takes (see {@link GatewayLimiter#config}), or a {@code floor-}, which is
 * no limiter but times the least a round trip costs.
 * <p>
 * Our store is given a timeout of ten seconds, and {@link #checkEveryDecisionCameFromRedis()} fails once it, or the
 * gateway's limiter, fell back to its failure policy even once.
 */
final class RedisContender implements AutoCloseable {

	/** A {@code PING} per call, waited for as our store waits for its script. */
	static final String FLOOR_PING = "floor-PING";

	/** {@code EVALSHA} of a script that only returns 1. */
	static final String FLOOR_RETURN = "floor-return-1";

	/**
	 * {@code EVALSHA} of a script that makes only the three calls every one of our scripts makes ({@code TIME},
	 * then {@code GET} and {@code SET … PX} on the caller's key) and returns eight integers.
	 */
	static final String FLOOR_COMMANDS = "floor-TIME-GET-SET";

	static final String[] FLOORS = { FLOOR_PING, FLOOR_RETURN, FLOOR_COMMANDS };

	/** Spring Cloud Gateway's {@code RedisRateLimiter}, through Spring Data Redis' reactive template on Lettuce. */
	static final String GATEWAY = "gateway";

	/** The most threads of any benchmark, so that no Jedis caller waits for a connection. */
	static final int JEDIS_CONNECTIONS = 128;

	final Limiter limiter;

	private final List<AutoCloseable> resources;

	private final AtomicLong fallbacks;

	private RedisContender(Limiter limiter, List<AutoCloseable> resources, AtomicLong fallbacks) {
		this.limiter = limiter;
		this.resources = resources;
		this.fallbacks = fallbacks;
	}

	static RedisContender open(String contender, int port) {
		List<AutoCloseable> resources = new ArrayList<>();
		AtomicLong fallbacks = new AtomicLong();
		RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", port));
		resources.add(client::shutdown);
		Limiter limiter;
		if (contender.equals("bucket4j")) {
			limiter = bucket4j(client, Load.ALLOWED.peerPolicy());
		}
		else if (contender.equals(GATEWAY)) {
			LettuceConnectionFactory connections = springConnections(port);
			resources.add(0, connections::destroy);
			limiter = GatewayLimiter.of(connections, Load.ALLOWED.peerPolicy(), fallbacks);
		}
		else if (contender.startsWith("floor-")) {
			StatefulRedisConnection<String, String> connection = client.connect();
			resources.add(0, connection);
			limiter = floor(contender, connection.async());
		}
		else {
			RedisScriptExecutor executor;
			if (contender.endsWith("-spring")) {
				LettuceConnectionFactory connections = springConnections(port);
				resources.add(0, connections::destroy);
				SpringDataRedisScriptExecutor spring = new SpringDataRedisScriptExecutor(connections);
				resources.add(0, spring);
				executor = spring;
			}
			else if (contender.endsWith("-jedis")) {
				JedisPooled jedis = jedis(port);
				resources.add(0, jedis);
				executor = new JedisScriptExecutor(jedis);
			}
			else {
				StatefulRedisConnection<String, String> connection = client.connect();
				resources.add(0, connection);
				executor = new LettuceExecutor(connection.async());
			}
			String algorithm = contender.replace("-spring", "").replace("-jedis", "");
			RedisRateLimitStore store = RedisRateLimitStore.builder(executor)
				.timeout(Duration.ofSeconds(10))
				.onFailure((policies, cause) -> fallbacks.incrementAndGet())
				.build();
			// closed first: it leaves the fleet while its connection is still open
			resources.add(0, store);
			dev.ratelimit.core.RateLimiter ours = store.limiter(Load.ALLOWED.policy(Algorithm.valueOf(algorithm)));
			limiter = (key, bytes) -> ours.tryAcquire(key);
		}
		return new RedisContender(limiter, resources, fallbacks);
	}

	/** Spring Data Redis on Lettuce as Boot configures it: every caller shares its one native connection. */
	static LettuceConnectionFactory springConnections(int port) {
		LettuceConnectionFactory connections = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", port));
		connections.afterPropertiesSet();
		connections.start();
		return connections;
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

	/** Bucket4j's Lettuce compare-and-swap backend, one bucket per key, with the policy's limit and burst. */
	static Limiter bucket4j(RedisClient client, RateLimitPolicy policy) {
		ProxyManager<byte[]> buckets = Bucket4jLettuce.casBasedBuilder(client)
			.expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(1)))
			.build();
		BucketConfiguration configuration = BucketConfiguration.builder()
			.addLimit(Bandwidth.builder().capacity(policy.burst()).refillGreedy(policy.limit(), policy.window()).build())
			.build();
		return (key, bytes) -> buckets.builder().build(bytes, () -> configuration).tryConsume(1);
	}

	private static Limiter floor(String floor, RedisAsyncCommands<String, String> redis) {
		String script;
		try {
			script = floor.equals(FLOOR_RETURN) ? "return 1" : RedisSection.resource("lua/commands-only.lua");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		String sha = redis.scriptLoad(script).toCompletableFuture().join();
		return (key, bytes) -> {
			RedisFuture<?> reply = floor.equals(FLOOR_PING) ? redis.ping()
					: redis.evalsha(sha, ScriptOutputType.MULTI, "ratelimit:{" + key + "}:floor");
			try {
				return reply.toCompletableFuture().get(10, TimeUnit.SECONDS) != null;
			}
			catch (Exception ex) {
				throw new IllegalStateException(floor + " failed", ex);
			}
		};
	}

	/** Fails if our store decided without Redis since the last check: the measurement would be void. */
	void checkEveryDecisionCameFromRedis() {
		long count = this.fallbacks.getAndSet(0);
		if (count > 0) {
			throw new IllegalStateException(count + " decisions were made without Redis: the measurement is void");
		}
	}

	@Override
	public void close() {
		for (AutoCloseable resource : this.resources) {
			try {
				resource.close();
			}
			catch (Exception ex) {
				throw new IllegalStateException("Cannot close a client of " + this, ex);
			}
		}
	}

	/** What each contender is asked; Bucket4j's keys are bytes, encoded once beforehand. */
	@FunctionalInterface
	interface Limiter {

		boolean tryAcquire(String key, byte[] bytes);

	}

}
