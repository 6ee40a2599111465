package dev.ratelimit.core.testing;

import java.util.Map;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.jspecify.annotations.Nullable;

/**
 * The Redis of a test run, found once and shared by every test that uses the {@link RedisExtension}: the one
 * at {@code REDIS_URL} if set, else a {@code redis:7-alpine} container if Docker answers, else a
 * {@code redis-server} from the {@code PATH} on a free loopback port. Containers and servers started here are
 * stopped and cleaned up at the end of the run.
 * <p>
 * Without any of them, tests are skipped, unless the environment variable {@code REDIS_REQUIRED} is
 * {@code true}: then they fail. Only loopback addresses are ever used, since tests flush scripts and write
 * keys.
 */
public final class TestRedis implements AutoCloseable {

	private final String uri;

	private final String origin;

	private final AutoCloseable server;

	private final LettuceScriptExecutor executor;

	private final RedisClient client;

	private final StatefulRedisConnection<String, String> connection;

	private TestRedis(String uri, String origin, AutoCloseable server) {
		this.uri = uri;
		this.origin = origin;
		this.server = server;
		this.executor = LettuceScriptExecutor.standalone(uri);
		this.client = RedisClient.create(uri);
		this.connection = this.client.connect();
	}

	/**
	 * Finds or starts a Redis, or returns why there is none.
	 * @return the Redis, or null
	 */
	static Object find() {
		String url = System.getenv("REDIS_URL");
		if (url != null && !url.isBlank()) {
			checkLoopback(RedisURI.create(url), "REDIS_URL");
			return new TestRedis(url, "REDIS_URL", () -> {
			});
		}
		TestRedis container = fromContainer();
		if (container != null) {
			return container;
		}
		if (RedisServerProcess.isAvailable()) {
			RedisServerProcess server = RedisServerProcess.start();
			return new TestRedis(server.uri(), "redis-server on port " + server.port(), server);
		}
		return "REDIS_URL is not set, Docker does not answer and there is no redis-server on the PATH";
	}

	private static @Nullable TestRedis fromContainer() {
		LocalServers.Started container = LocalServers.container("redis:7-alpine", 6379, Map.of(), null, 0);
		return (container != null) ? new TestRedis("redis://" + container.host() + ":" + container.port(),
				"Testcontainers", container.stop()) : null;
	}

	private static void checkLoopback(RedisURI uri, String source) {
		if (uri.getSocket() == null && !LocalServers.isLoopback(uri.getHost())) {
			throw new IllegalStateException(source + " points at " + uri.getHost()
					+ ", which is not a loopback address: tests only use a Redis on this machine");
		}
	}

	/**
	 * Skips the current test because {@code reason} keeps it from running, or fails it when the environment
	 * variable {@code REDIS_REQUIRED} is {@code true}. Call it from {@code beforeEach}, never from
	 * {@code beforeAll}, where a skipped test would vanish from the counts.
	 * @param reason what is missing
	 */
	public static void skipOrFail(String reason) {
		LocalServers.skipOrFail("Redis", "REDIS_REQUIRED", reason);
	}

	/**
	 * Returns the URI of this Redis.
	 * @return the URI
	 */
	public String uri() {
		return this.uri;
	}

	/**
	 * Returns a script executor on one connection shared by every test of the run.
	 * @return the executor
	 */
	public LettuceScriptExecutor executor() {
		return this.executor;
	}

	/**
	 * Returns synchronous commands on a connection of their own, to look at what the scripts wrote.
	 * @return the commands
	 */
	public RedisCommands<String, String> commands() {
		return this.connection.sync();
	}

	@Override
	public String toString() {
		return this.uri + " (" + this.origin + ")";
	}

	@Override
	public void close() {
		this.connection.close();
		this.client.shutdown();
		this.executor.close();
		try {
			this.server.close();
		}
		catch (Exception ex) {
			// stopping on the way out: nothing left to do with a failure
		}
	}

}
