package dev.ratelimit.spring.redis;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.redis.RedisScriptExecutor;
import dev.ratelimit.core.redis.ScriptNotSentException;

/**
 * A {@link RedisScriptExecutor} on Spring Data Redis, for the {@link RedisRateLimitStore}.
 * <p>
 * Each call is one {@code EVALSHA}, followed by an {@code EVAL} only when Redis answers {@code NOSCRIPT}. It
 * never blocks a thread: replies arrive on the client's I/O threads, many calls share one connection, and that
 * connection is opened on a thread of its own, so that a Redis that does not answer keeps a caller waiting no
 * longer than the store's timeout. On a Redis Cluster, Lettuce sends each call to the node owning its keys,
 * which share one hash tag.
 * <p>
 * On a {@link LettuceConnectionFactory} (Spring Boot's default), the executor opens a Lettuce client of its own
 * for the same Redis (standalone, Sentinel or Cluster, with the same credentials, TLS, database, client name
 * and command timeout), leaving the application's factory and its options as they are, and sends calls
 * straight to that client's asynchronous commands: the reactive template costs about as much client time per
 * decision as Redis spends running the script. That client guarantees:
 * <ul>
 * <li>while it is disconnected, a call fails at once with a {@link ScriptNotSentException} of reason
 * {@code UNREACHABLE}, as does a call for which it cannot connect: such calls are never queued, and so never
 * run when Redis is back;</li>
 * <li>a call the store gives up on (it cancels the stage when its timeout passes) is cancelled in Lettuce, and
 * a cancelled command is never written: neither from the client's queue nor after a reconnection. A call
 * already written when Redis stops answering may still run once Redis resumes; none is written twice;</li>
 * <li>a call in flight when the connection drops fails as an ordinary failure, since Redis may have run
 * it;</li>
 * <li>it tries to reconnect at most 200 ms apart, however long the outage, so that decisions are back in Redis
 * within a fraction of a second of Redis accepting connections again; a connection attempt gives up after at
 * most a second.</li>
 * </ul>
 * Closing the executor closes that client. Any other factory goes through the reactive template.
 */
public final class SpringDataRedisScriptExecutor implements RedisScriptExecutor, AutoCloseable {

	private final RedisScriptExecutor calls;

	private final @Nullable LettuceScriptCalls lettuce;

	/**
	 * Creates an executor for the Redis of the given connection factory, such as the
	 * {@code LettuceConnectionFactory} Spring Boot configures from {@code spring.data.redis.*}; on Lettuce,
	 * with a client of its own, which closing the executor closes.
	 * @param connectionFactory the reactive connection factory
	 */
	public SpringDataRedisScriptExecutor(ReactiveRedisConnectionFactory connectionFactory) {
		Objects.requireNonNull(connectionFactory, "connectionFactory must not be null");
		if (connectionFactory instanceof LettuceConnectionFactory application) {
			this.lettuce = new LettuceScriptCalls(application);
			this.calls = this.lettuce;
		}
		else {
			this.lettuce = null;
			this.calls = onTemplate(new ReactiveStringRedisTemplate(connectionFactory));
		}
	}

	/**
	 * Creates an executor on the given template, whose string serializers write the keys and arguments.
	 * @param template the template
	 */
	public SpringDataRedisScriptExecutor(ReactiveStringRedisTemplate template) {
		this.lettuce = null;
		this.calls = onTemplate(Objects.requireNonNull(template, "template must not be null"));
	}

	@SuppressWarnings("rawtypes")
	private static RedisScriptExecutor onTemplate(ReactiveStringRedisTemplate template) {
		Map<String, RedisScript<List>> scripts = new ConcurrentHashMap<>();
		// the whole MULTI reply arrives as one list
		return (sha1, script, keys, args) -> template
			.execute(scripts.computeIfAbsent(sha1, (digest) -> RedisScript.of(script, List.class)), keys, args)
			.single()
			.map(Replies::integers)
			.toFuture();
	}

	@Override
	public CompletionStage<List<Long>> execute(String sha1, String script, List<String> keys, List<String> args) {
		return this.calls.execute(sha1, script, keys, args);
	}

	/**
	 * Closes the Lettuce client this executor opened, if any; a template stays open.
	 */
	@Override
	public void close() {
		if (this.lettuce != null) {
			this.lettuce.close();
		}
	}

}
