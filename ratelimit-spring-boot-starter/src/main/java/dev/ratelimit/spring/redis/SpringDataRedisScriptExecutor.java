package dev.ratelimit.spring.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.redis.RedisScriptExecutor;

/**
 * A {@link RedisScriptExecutor} on Spring Data Redis, for the {@link RedisRateLimitStore}.
 * <p>
 * Each call is one {@code EVALSHA}, followed by an {@code EVAL} only when Redis answers {@code NOSCRIPT}. It
 * never blocks a thread: replies arrive on the client's I/O threads, many calls share one connection, and that
 * connection is opened on a thread of its own, so that a Redis that does not answer keeps a caller waiting no
 * longer than the store's timeout. On a Redis Cluster, Lettuce sends each call to the node owning its keys,
 * which share one hash tag.
 * <p>
 * On a {@link LettuceConnectionFactory} that shares its native connection (Spring Boot's default), calls go
 * straight to that connection's asynchronous commands: the reactive template costs about as much client time
 * per decision as Redis spends running the script, which a request waiting on its decision pays in latency.
 * Any other factory goes through the reactive template.
 */
public final class SpringDataRedisScriptExecutor implements RedisScriptExecutor {

	private final ReactiveStringRedisTemplate template;

	private final @Nullable LettuceConnectionFactory lettuce;

	/** The shared connection's commands once open, fetched again should the factory have replaced it. */
	private volatile @Nullable RedisClusterAsyncCommands<byte[], byte[]> commands;

	private final BackgroundOpen<RedisClusterAsyncCommands<byte[], byte[]>> opening = new BackgroundOpen<>(
			this::connect, RedisClusterAsyncCommands::isOpen);

	@SuppressWarnings("rawtypes")
	private final Map<String, RedisScript<List>> scripts = new ConcurrentHashMap<>();

	/**
	 * Creates an executor on the given connections, such as the {@code LettuceConnectionFactory} Spring Boot
	 * configures from {@code spring.data.redis.*}.
	 * @param connectionFactory the reactive connection factory
	 */
	public SpringDataRedisScriptExecutor(ReactiveRedisConnectionFactory connectionFactory) {
		this(new ReactiveStringRedisTemplate(
				Objects.requireNonNull(connectionFactory, "connectionFactory must not be null")),
				(connectionFactory instanceof LettuceConnectionFactory lettuce && lettuce.getShareNativeConnection())
						? lettuce : null);
	}

	/**
	 * Creates an executor on the given template, whose string serializers write the keys and arguments.
	 * @param template the template
	 */
	public SpringDataRedisScriptExecutor(ReactiveStringRedisTemplate template) {
		this(template, null);
	}

	private SpringDataRedisScriptExecutor(ReactiveStringRedisTemplate template,
			@Nullable LettuceConnectionFactory lettuce) {
		this.template = Objects.requireNonNull(template, "template must not be null");
		this.lettuce = lettuce;
	}

	@Override
	@SuppressWarnings("rawtypes")
	public CompletionStage<List<Long>> execute(String sha1, String script, List<String> keys, List<String> args) {
		if (this.lettuce != null) {
			return executeOnLettuce(sha1, script, keys, args);
		}
		RedisScript<List> redisScript = this.scripts.computeIfAbsent(sha1,
				(digest) -> RedisScript.of(script, List.class));
		// the whole MULTI reply arrives as one list
		return this.template.execute(redisScript, keys, args)
			.single()
			.map(Replies::integers)
			.toFuture();
	}

	private CompletionStage<List<Long>> executeOnLettuce(String sha1, String script, List<String> keys,
			List<String> args) {
		RedisClusterAsyncCommands<byte[], byte[]> commands = this.commands;
		if (commands != null && commands.isOpen()) {
			return send(commands, sha1, script, keys, args);
		}
		// opening the connection waits as long as the client's own timeouts allow: not on the caller's thread,
		// which waits only as long as the store's timeout
		CompletableFuture<List<Long>> reply = new CompletableFuture<>();
		this.opening.get().whenComplete((opened, ex) -> {
			if (ex != null) {
				reply.completeExceptionally(ex);
			}
			else if (!reply.isDone()) {
				send(opened, sha1, script, keys, args).whenComplete((values, failure) -> {
					if (failure != null) {
						reply.completeExceptionally(failure);
					}
					else {
						reply.complete(values);
					}
				});
			}
		});
		return reply;
	}

	private CompletableFuture<List<Long>> send(RedisClusterAsyncCommands<byte[], byte[]> commands, String sha1,
			String script, List<String> keys, List<String> args) {
		byte[][] keyBytes = bytes(keys);
		byte[][] argBytes = bytes(args);
		RedisFuture<List<Object>> byDigest = commands.evalsha(sha1, ScriptOutputType.MULTI, keyBytes, argBytes);
		CompletableFuture<List<Long>> reply = byDigest.toCompletableFuture()
			.exceptionallyCompose((ex) -> isNoScript(ex)
					? commands.<List<Object>>eval(script, ScriptOutputType.MULTI, keyBytes, argBytes)
					: CompletableFuture.failedFuture(ex))
			.thenApply(Replies::integers);
		// a call the store gave up on is not sent when the connection comes back
		reply.whenComplete((values, ex) -> {
			if (reply.isCancelled()) {
				byDigest.cancel(true);
			}
		});
		return reply;
	}

	private RedisClusterAsyncCommands<byte[], byte[]> connect() {
		@SuppressWarnings("unchecked")
		RedisClusterAsyncCommands<byte[], byte[]> shared = (RedisClusterAsyncCommands<byte[], byte[]>) Objects
			.requireNonNull(this.lettuce)
			.getConnection()
			.getNativeConnection();
		this.commands = shared;
		return shared;
	}

	private static boolean isNoScript(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof RedisNoScriptException) {
				return true;
			}
		}
		return false;
	}

	private static byte[][] bytes(List<String> values) {
		byte[][] bytes = new byte[values.size()][];
		for (int i = 0; i < bytes.length; i++) {
			bytes[i] = values.get(i).getBytes(StandardCharsets.UTF_8);
		}
		return bytes;
	}

}
