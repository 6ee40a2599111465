package dev.ratelimit.core.redis;

import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts the decision calls of a store, to show that each decision is one round trip; the fleet heartbeat,
 * which runs once a second whatever the traffic, is not a decision.
 */
final class CountingExecutor implements RedisScriptExecutor {

	private final RedisScriptExecutor delegate;

	private final AtomicInteger calls = new AtomicInteger();

	CountingExecutor(RedisScriptExecutor delegate) {
		this.delegate = delegate;
	}

	@Override
	public CompletionStage<List<Long>> execute(String sha1, String script, List<String> keys, List<String> args) {
		if (!sha1.equals(RedisScripts.get().fleet().sha1())) {
			this.calls.incrementAndGet();
		}
		return this.delegate.execute(sha1, script, keys, args);
	}

	int calls() {
		return this.calls.get();
	}

}
