package dev.ratelimit.core.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.redis.RedisScriptExecutor;

/**
 * A {@link RedisScriptExecutor} on plain Lettuce, for tests: one connection, to a standalone Redis or a Redis
 * Cluster, shared by every thread. It reconnects every 100 ms while Redis is away, so that failure tests see
 * Redis back soon after it returns.
 */
public final class LettuceScriptExecutor implements RedisScriptExecutor, AutoCloseable {

	private final RedisScriptingAsyncCommands<String, String> commands;

	private final List<AutoCloseable> owned;

	private final AtomicInteger noScriptFallbacks = new AtomicInteger();

	private LettuceScriptExecutor(RedisScriptingAsyncCommands<String, String> commands, List<AutoCloseable> owned) {
		this.commands = commands;
		this.owned = owned;
	}

	/**
	 * Connects to a standalone Redis.
	 * @param uri the Redis URI, such as {@code redis://127.0.0.1:6379}
	 * @return the executor, owning its client
	 */
	public static LettuceScriptExecutor standalone(String uri) {
		ClientResources resources = resources();
		RedisClient client = RedisClient.create(resources, RedisURI.create(uri));
		client.setOptions(ClientOptions.builder().autoReconnect(true).build());
		StatefulRedisConnection<String, String> connection = client.connect();
		return new LettuceScriptExecutor(connection.async(),
				List.of(connection, client::shutdown, () -> resources.shutdown(0, 2, TimeUnit.SECONDS)));
	}

	/**
	 * Connects to a Redis Cluster; each call goes to the node owning its keys' slot.
	 * @param uris some of the cluster's nodes
	 * @return the executor, owning its client
	 */
	public static LettuceScriptExecutor cluster(List<String> uris) {
		ClientResources resources = resources();
		List<RedisURI> seeds = new ArrayList<>();
		uris.forEach((uri) -> seeds.add(RedisURI.create(uri)));
		RedisClusterClient client = RedisClusterClient.create(resources, seeds);
		client.setOptions(ClusterClientOptions.builder().autoReconnect(true).build());
		StatefulRedisClusterConnection<String, String> connection = client.connect();
		return new LettuceScriptExecutor(connection.async(),
				List.of(connection, client::shutdown, () -> resources.shutdown(0, 2, TimeUnit.SECONDS)));
	}

	private static ClientResources resources() {
		return ClientResources.builder()
			.ioThreadPoolSize(2)
			.computationThreadPoolSize(2)
			.reconnectDelay(Delay.constant(Duration.ofMillis(100)))
			.build();
	}

	@Override
	public CompletionStage<List<Long>> execute(String sha1, String script, List<String> keys, List<String> args) {
		String[] keyArray = keys.toArray(String[]::new);
		String[] argArray = args.toArray(String[]::new);
		CompletableFuture<List<Long>> reply = new CompletableFuture<>();
		RedisFuture<List<Object>> byDigest = this.commands.evalsha(sha1, ScriptOutputType.MULTI, keyArray, argArray);
		byDigest.whenComplete((values, ex) -> {
			if (ex instanceof RedisNoScriptException) {
				this.noScriptFallbacks.incrementAndGet();
				this.commands.<List<Object>>eval(script, ScriptOutputType.MULTI, keyArray, argArray)
					.whenComplete((loaded, failure) -> complete(reply, loaded, failure));
			}
			else {
				complete(reply, values, ex);
			}
		});
		// a command the caller gave up on is not sent when the connection comes back
		reply.whenComplete((values, ex) -> {
			if (reply.isCancelled()) {
				byDigest.cancel(true);
			}
		});
		return reply;
	}

	@SuppressWarnings("unchecked")
	private static void complete(CompletableFuture<List<Long>> reply, @Nullable List<Object> values,
			@Nullable Throwable ex) {
		if (ex != null) {
			reply.completeExceptionally(ex);
		}
		else {
			reply.complete((List<Long>) (List<?>) values);
		}
	}

	/**
	 * Returns how many calls found their script missing and sent its source instead.
	 * @return the number of {@code NOSCRIPT} fallbacks so far
	 */
	public int noScriptFallbacks() {
		return this.noScriptFallbacks.get();
	}

	@Override
	public void close() {
		for (AutoCloseable resource : this.owned) {
			try {
				resource.close();
			}
			catch (Exception ex) {
				// closing on the way out: nothing left to do with a failure
			}
		}
	}

}
