package dev.ratelimit.core.redis;

import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Runs a Lua script in Redis: the only thing the {@link RedisRateLimitStore} needs from a Redis client. An
 * implementation carries bytes; it decides nothing.
 * <p>
 * Implementations must be thread-safe. An asynchronous one lets many decisions be in flight at once on one
 * connection, and the store waits for each only as long as its timeout; it may complete the stage on any thread,
 * such as its I/O thread, on which the store's {@link RedisRateLimitStore#decideAllAsync asynchronous} decisions
 * go on without ever blocking it. An implementation may instead run the call on the caller's thread and return a
 * completed stage, sparing it the hand-offs to and from a client's I/O thread; the store cannot interrupt such a
 * call, so the implementation must bound every wait itself by the store's timeout, as a blocking client's socket
 * timeout does, and an asynchronous decision then waits on the caller's thread too. Implementations must work on Redis Cluster by
 * routing the call to the node owning the keys' slot (all keys of one call share a hash tag).
 */
@FunctionalInterface
public interface RedisScriptExecutor {

	/**
	 * Runs {@code script} with {@code EVALSHA sha1}, falling back to {@code EVAL} (or {@code SCRIPT LOAD} and
	 * {@code EVALSHA}) when Redis answers {@code NOSCRIPT}, as it does after a restart or a
	 * {@code SCRIPT FLUSH}.
	 * @param sha1 the script's SHA-1 digest, 40 lowercase hexadecimal digits
	 * @param script the script's source, whose digest {@code sha1} is
	 * @param keys the keys the script touches ({@code KEYS})
	 * @param args the script's arguments ({@code ARGV})
	 * @return the script's reply, an array of integers; completed exceptionally when Redis fails or answers
	 * with an error
	 */
	CompletionStage<List<Long>> execute(String sha1, String script, List<String> keys, List<String> args);

}
