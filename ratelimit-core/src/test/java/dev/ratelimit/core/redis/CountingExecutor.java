package dev.ratelimit.core.redis;

import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

/** Counts the script calls of a store, to show that each decision is one round trip. */
final class CountingExecutor implements RedisScriptExecutor {

	private final RedisScriptExecutor delegate;

	private final AtomicInteger calls = new AtomicInteger();

	CountingExecutor(RedisScriptExecutor delegate) {
		this.delegate = delegate;
	}

	@Override
	public CompletionStage<List<Long>> execute(String sha1, String script, List<String> keys, List<String> args) {
		this.calls.incrementAndGet();
		return this.delegate.execute(sha1, script, keys, args);
	}

	int calls() {
		return this.calls.get();
	}

}
