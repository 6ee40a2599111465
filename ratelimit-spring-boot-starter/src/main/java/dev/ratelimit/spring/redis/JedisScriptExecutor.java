package dev.ratelimit.spring.redis;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.jspecify.annotations.Nullable;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisNoScriptException;

import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.redis.RedisScriptExecutor;

/**
 * A {@link RedisScriptExecutor} on Jedis, for the {@link RedisRateLimitStore}, that runs each call on the
 * caller's thread over a pooled connection.
 * <p>
 * A request thread waits for its decision anyway. Sending the {@code EVALSHA} and reading its reply on that
 * thread spares the decision the two thread hand-offs of an asynchronous client (to its I/O thread and back),
 * which on a local Redis cost more than Redis spends running the script. Such an executor does not let many
 * calls share one connection: the pool holds one connection per concurrent caller, up to its size.
 * <p>
 * The call blocks, so its wait is bounded by the connection rather than by the store: built from a
 * {@link JedisConnectionFactory}, the executor opens a client of its own for the same Redis (standalone,
 * Sentinel or Cluster, with the same credentials, TLS and pool size) whose connect and read timeouts, pool wait
 * and cluster retries are all bounded by the timeout it is given, the store's. That client is opened on a thread
 * of its own, and a caller waits for it at most that timeout.
 */
public final class JedisScriptExecutor implements RedisScriptExecutor, AutoCloseable {

	private volatile @Nullable UnifiedJedis jedis;

	private final @Nullable BackgroundOpen<UnifiedJedis> opening;

	private final long timeoutNanos;

	private boolean closed;

	/**
	 * Creates an executor on the given client, whose own timeouts bound each call; closing the executor leaves
	 * the client open.
	 * @param jedis the client, such as a {@code JedisPooled} or a {@code JedisCluster}
	 */
	public JedisScriptExecutor(UnifiedJedis jedis) {
		this.jedis = Objects.requireNonNull(jedis, "jedis must not be null");
		this.opening = null;
		this.timeoutNanos = 0;
	}

	/**
	 * Creates an executor with a client of its own for the Redis the given connection factory reaches, every
	 * wait of which is bounded by {@code timeout}; closing the executor closes that client.
	 * @param connectionFactory the connection factory, such as the one Spring Boot configures from
	 * {@code spring.data.redis.*} when the application uses Jedis
	 * @param timeout how long any one wait may take, positive
	 */
	public JedisScriptExecutor(JedisConnectionFactory connectionFactory, Duration timeout) {
		Objects.requireNonNull(connectionFactory, "connectionFactory must not be null");
		Objects.requireNonNull(timeout, "timeout must not be null");
		if (timeout.isNegative() || timeout.isZero()) {
			throw new IllegalArgumentException("timeout must be positive, was " + timeout);
		}
		this.timeoutNanos = timeout.toNanos();
		this.opening = new BackgroundOpen<>(() -> open(connectionFactory, timeout), (opened) -> true);
	}

	private UnifiedJedis open(JedisConnectionFactory connectionFactory, Duration timeout) {
		UnifiedJedis opened = JedisClients.create(connectionFactory, timeout);
		synchronized (this) {
			if (!this.closed) {
				this.jedis = opened;
				return opened;
			}
		}
		// closed while it was opening: its Sentinel listeners would otherwise outlive the application
		opened.close();
		throw new IllegalStateException("The Redis executor is closed");
	}

	@Override
	public CompletionStage<List<Long>> execute(String sha1, String script, List<String> keys, List<String> args) {
		try {
			UnifiedJedis jedis = client();
			Object reply;
			try {
				reply = jedis.evalsha(sha1, keys, args);
			}
			catch (JedisNoScriptException ex) {
				reply = jedis.eval(script, keys, args);
			}
			return CompletableFuture.completedFuture(Replies.integers(reply));
		}
		catch (RuntimeException | ExecutionException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		catch (TimeoutException ex) {
			return CompletableFuture.failedFuture(new TimeoutException(
					"Redis did not connect within " + Duration.ofNanos(this.timeoutNanos).toMillis() + " ms"));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return CompletableFuture.failedFuture(ex);
		}
	}

	private UnifiedJedis client() throws InterruptedException, ExecutionException, TimeoutException {
		UnifiedJedis jedis = this.jedis;
		if (jedis != null) {
			return jedis;
		}
		return Objects.requireNonNull(this.opening).get().get(this.timeoutNanos, TimeUnit.NANOSECONDS);
	}

	/**
	 * Closes the client this executor opened, if any.
	 */
	@Override
	public void close() {
		UnifiedJedis opened;
		synchronized (this) {
			this.closed = true;
			opened = (this.opening != null) ? this.jedis : null;
		}
		if (opened != null) {
			opened.close();
		}
	}

}
