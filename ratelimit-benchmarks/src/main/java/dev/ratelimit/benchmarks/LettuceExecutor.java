package dev.ratelimit.benchmarks;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import dev.ratelimit.core.redis.RedisScriptExecutor;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;

/**
 * The store's script port on plain Lettuce, as an application would write it: {@code EVALSHA} on one shared
 * connection, {@code EVAL} when Redis does not know the script yet.
 */
final class LettuceExecutor implements RedisScriptExecutor {

	private final RedisScriptingAsyncCommands<String, String> redis;

	LettuceExecutor(RedisScriptingAsyncCommands<String, String> redis) {
		this.redis = redis;
	}

	@Override
	@SuppressWarnings("unchecked")
	public CompletionStage<List<Long>> execute(String sha1, String script, List<String> keys, List<String> args) {
		String[] keyArray = keys.toArray(String[]::new);
		String[] argArray = args.toArray(String[]::new);
		return this.redis.<List<Object>>evalsha(sha1, ScriptOutputType.MULTI, keyArray, argArray)
			.exceptionallyCompose((ex) -> (ex instanceof RedisNoScriptException
					|| ex.getCause() instanceof RedisNoScriptException)
							? this.redis.<List<Object>>eval(script, ScriptOutputType.MULTI, keyArray, argArray)
							: CompletableFuture.failedFuture(ex))
			.thenApply((values) -> (List<Long>) (List<?>) values);
	}

}
