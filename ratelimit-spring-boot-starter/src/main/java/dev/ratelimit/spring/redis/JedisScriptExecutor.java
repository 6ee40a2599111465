package dev.ratelimit.spring.redis;

import java.time.Duration;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.jspecify.annotations.Nullable;
import redis.clients.jedis.ConnectionFactory;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.exceptions.JedisNoScriptException;

import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.redis.RedisScriptExecutor;
import dev.ratelimit.core.redis.ScriptNotSentException;
import dev.ratelimit.core.redis.ScriptNotSentException.Reason;

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
 * Sentinel or Cluster, with the same credentials and TLS) with a pool of the size it is given, whose connect and
 * read timeouts, pool wait and cluster retries are all bounded by the timeout it is given, the store's. That
 * client is opened on a thread of its own, and a caller waits for it at most that timeout. On that client, a
 * call that did not reach Redis fails with a {@link ScriptNotSentException}:
 * <ul>
 * <li>{@code CLIENT_BUSY} when every pooled connection stayed in use for the whole timeout, which is a
 * shortage of this instance, not a Redis failure: size the pool for the threads that decide at once;</li>
 * <li>{@code UNREACHABLE} when the connection it needed could not be opened (refused, timed out, or the
 * Sentinels do not know the primary), which with Redis down happens at once.</li>
 * </ul>
 * A call whose reply did not come within the timeout, or whose connection broke while it waited, fails as an
 * ordinary failure: Redis may have run it, and may still run it once it resumes. A broken connection is
 * dropped, and the next call opens a new one, so decisions are back in Redis with the first call after Redis
 * accepts connections again.
 */
public final class JedisScriptExecutor implements RedisScriptExecutor, AutoCloseable {

	private volatile @Nullable UnifiedJedis jedis;

	private final @Nullable BackgroundOpen<UnifiedJedis> opening;

	private final long timeoutNanos;

	private volatile boolean closed;

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
	 * @param poolSize how many connections the pool may hold, hence how many calls may run at once, positive
	 */
	public JedisScriptExecutor(JedisConnectionFactory connectionFactory, Duration timeout, int poolSize) {
		Objects.requireNonNull(connectionFactory, "connectionFactory must not be null");
		Objects.requireNonNull(timeout, "timeout must not be null");
		if (timeout.isNegative() || timeout.isZero()) {
			throw new IllegalArgumentException("timeout must be positive, was " + timeout);
		}
		if (poolSize < 1) {
			throw new IllegalArgumentException("poolSize must be positive, was " + poolSize);
		}
		this.timeoutNanos = timeout.toNanos();
		this.opening = new BackgroundOpen<>(() -> open(connectionFactory, timeout, poolSize));
	}

	private UnifiedJedis open(JedisConnectionFactory connectionFactory, Duration timeout, int poolSize) {
		UnifiedJedis opened = JedisClients.create(connectionFactory, timeout, poolSize);
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
		if (this.closed) {
			// a closed executor opens nothing again, whoever still calls it
			return CompletableFuture.failedFuture(
					new ScriptNotSentException(Reason.UNREACHABLE, "The Redis executor is closed", null));
		}
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
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(notSent(ex));
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			return CompletableFuture.failedFuture(new ScriptNotSentException(Reason.UNREACHABLE,
					"Redis could not be connected to: " + cause.getMessage(), cause));
		}
		catch (TimeoutException ex) {
			return CompletableFuture.failedFuture(new ScriptNotSentException(Reason.UNREACHABLE,
					"Redis did not connect within " + millis() + " ms", null));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * The failure as a {@link ScriptNotSentException} when Jedis did not send the call: no pooled connection
	 * was free within the timeout (Commons Pool's wait ends in a {@link NoSuchElementException} of no cause,
	 * unlike its failures to activate or validate a connection), or opening the connection it needed failed.
	 * Any other failure may have reached Redis.
	 */
	private RuntimeException notSent(RuntimeException ex) {
		if (ex instanceof JedisException && ex.getCause() instanceof NoSuchElementException exhausted
				&& exhausted.getCause() == null) {
			return new ScriptNotSentException(Reason.CLIENT_BUSY,
					"Every pooled Redis connection stayed in use: " + ex.getCause().getMessage(), ex);
		}
		if (ex instanceof JedisConnectionException && isOpeningConnection(ex)) {
			return new ScriptNotSentException(Reason.UNREACHABLE,
					"Redis could not be connected to: " + ex.getMessage(), ex);
		}
		return ex;
	}

	/** Whether the pool was opening a connection when it failed: nothing was written on that connection. */
	private static boolean isOpeningConnection(Throwable ex) {
		for (StackTraceElement frame : ex.getStackTrace()) {
			if (frame.getClassName().equals(ConnectionFactory.class.getName())
					&& frame.getMethodName().equals("makeObject")) {
				return true;
			}
		}
		return false;
	}

	private long millis() {
		return Duration.ofNanos(this.timeoutNanos).toMillis();
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
