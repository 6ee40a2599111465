package dev.ratelimit.spring.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.resource.ClientResources;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.core.redis.RedisScriptExecutor;
import dev.ratelimit.core.redis.ScriptNotSentException;
import dev.ratelimit.core.redis.ScriptNotSentException.Reason;

/**
 * Script calls on a Lettuce connection of the executor's own, built by {@link LettuceClients}, that no call
 * given up on or issued while disconnected ever reaches Redis later.
 */
final class LettuceScriptCalls implements RedisScriptExecutor, AutoCloseable {

	/**
	 * Lettuce's messages when it fails a command without writing it: disconnected with
	 * {@code REJECT_COMMANDS}, or closed.
	 */
	private static final Set<String> REJECTED = Set.of("Currently not connected. Commands are rejected.",
			"Connection is closed");

	private final ClientResources resources;

	private final LettuceConnectionFactory connections;

	private final BackgroundOpen<RedisClusterAsyncCommands<byte[], byte[]>> opening = new BackgroundOpen<>(
			this::connect);

	/** The connection's commands once open: Lettuce reconnects that connection, it is never replaced. */
	private volatile @Nullable RedisClusterAsyncCommands<byte[], byte[]> commands;

	LettuceScriptCalls(LettuceConnectionFactory application) {
		this.resources = LettuceClients.resources();
		this.connections = LettuceClients.create(application, this.resources);
		this.connections.start();
	}

	@Override
	public CompletionStage<List<Long>> execute(String sha1, String script, List<String> keys, List<String> args) {
		CompletableFuture<List<Long>> reply = new CompletableFuture<>();
		RedisClusterAsyncCommands<byte[], byte[]> commands = this.commands;
		if (commands != null) {
			send(commands, sha1, script, bytes(keys), bytes(args), reply);
			return reply;
		}
		// opening the connection waits as long as the client's own timeouts allow: not on the caller's thread,
		// which waits only as long as the store's timeout
		this.opening.get().whenComplete((opened, ex) -> {
			if (ex != null) {
				Throwable cause = (ex instanceof CompletionException && ex.getCause() != null) ? ex.getCause() : ex;
				reply.completeExceptionally(new ScriptNotSentException(Reason.UNREACHABLE,
						"Redis could not be connected to: " + cause.getMessage(), cause));
			}
			else if (!reply.isDone()) {
				send(opened, sha1, script, bytes(keys), bytes(args), reply);
			}
		});
		return reply;
	}

	private static void send(RedisClusterAsyncCommands<byte[], byte[]> commands, String sha1, String script,
			byte[][] keys, byte[][] args, CompletableFuture<List<Long>> reply) {
		RedisFuture<List<Object>> byDigest = commands.evalsha(sha1, ScriptOutputType.MULTI, keys, args);
		cancelWhenGivenUp(reply, byDigest);
		byDigest.whenComplete((values, ex) -> {
			if (ex != null && isNoScript(ex) && !reply.isDone()) {
				RedisFuture<List<Object>> bySource = commands.eval(script, ScriptOutputType.MULTI, keys, args);
				cancelWhenGivenUp(reply, bySource);
				bySource.whenComplete((sourceValues, sourceEx) -> settle(reply, sourceValues, sourceEx));
			}
			else {
				settle(reply, values, ex);
			}
		});
	}

	/**
	 * Cancels the command once the caller no longer waits for it. Lettuce writes no cancelled command: not
	 * from its queue, nor again after a reconnection.
	 */
	private static void cancelWhenGivenUp(CompletableFuture<List<Long>> reply, RedisFuture<?> command) {
		reply.whenComplete((values, ex) -> {
			if (!command.isDone()) {
				command.cancel(false);
			}
		});
	}

	private static void settle(CompletableFuture<List<Long>> reply, @Nullable List<Object> values,
			@Nullable Throwable ex) {
		if (ex != null) {
			reply.completeExceptionally(notSent(ex));
			return;
		}
		try {
			reply.complete(Replies.integers(values));
		}
		catch (RuntimeException invalid) {
			reply.completeExceptionally(invalid);
		}
	}

	/**
	 * The failure as a {@link ScriptNotSentException} when Lettuce did not write the command: it rejected it
	 * while disconnected or closed, or could not connect to the node it was meant for. Any other failure, such
	 * as the connection dropping with the command written, may have reached Redis.
	 */
	static Throwable notSent(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof RedisConnectionException
					|| (cause.getClass() == RedisException.class && REJECTED.contains(cause.getMessage()))) {
				return new ScriptNotSentException(Reason.UNREACHABLE, "Redis is not connected: " + cause.getMessage(),
						ex);
			}
		}
		return ex;
	}

	private static boolean isNoScript(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof RedisNoScriptException) {
				return true;
			}
		}
		return false;
	}

	private RedisClusterAsyncCommands<byte[], byte[]> connect() {
		@SuppressWarnings("unchecked")
		RedisClusterAsyncCommands<byte[], byte[]> opened = (RedisClusterAsyncCommands<byte[], byte[]>) this.connections
			.getConnection()
			.getNativeConnection();
		this.commands = opened;
		return opened;
	}

	private static byte[][] bytes(List<String> values) {
		byte[][] bytes = new byte[values.size()][];
		for (int i = 0; i < bytes.length; i++) {
			bytes[i] = values.get(i).getBytes(StandardCharsets.UTF_8);
		}
		return bytes;
	}

	/**
	 * Closes the connection, then the client resources, which no other client shares.
	 */
	@Override
	public void close() {
		this.connections.destroy();
		this.resources.shutdown(0, 2, TimeUnit.SECONDS);
	}

}
