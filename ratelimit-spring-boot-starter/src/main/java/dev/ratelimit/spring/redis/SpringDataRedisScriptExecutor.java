package dev.ratelimit.spring.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.redis.RedisScriptExecutor;

/**
 * A {@link RedisScriptExecutor} on Spring Data Redis' reactive template, for the {@link RedisRateLimitStore}.
 * <p>
 * Each call is one {@code EVALSHA}, followed by an {@code EVAL} only when Redis answers {@code NOSCRIPT}. It
 * never blocks a thread: replies arrive on the client's I/O threads, and many calls share one connection. On a
 * Redis Cluster, Lettuce sends each call to the node owning its keys, which share one hash tag.
 */
public final class SpringDataRedisScriptExecutor implements RedisScriptExecutor {

	private final ReactiveStringRedisTemplate template;

	@SuppressWarnings("rawtypes")
	private final Map<String, RedisScript<List>> scripts = new ConcurrentHashMap<>();

	/**
	 * Creates an executor on the given connections, such as the {@code LettuceConnectionFactory} Spring Boot
	 * configures from {@code spring.data.redis.*}.
	 * @param connectionFactory the reactive connection factory
	 */
	public SpringDataRedisScriptExecutor(ReactiveRedisConnectionFactory connectionFactory) {
		this(new ReactiveStringRedisTemplate(
				Objects.requireNonNull(connectionFactory, "connectionFactory must not be null")));
	}

	/**
	 * Creates an executor on the given template, whose string serializers write the keys and arguments.
	 * @param template the template
	 */
	public SpringDataRedisScriptExecutor(ReactiveStringRedisTemplate template) {
		this.template = Objects.requireNonNull(template, "template must not be null");
	}

	@Override
	@SuppressWarnings("rawtypes")
	public CompletionStage<List<Long>> execute(String sha1, String script, List<String> keys, List<String> args) {
		RedisScript<List> redisScript = this.scripts.computeIfAbsent(sha1,
				(digest) -> RedisScript.of(script, List.class));
		// the whole MULTI reply arrives as one list
		return this.template.execute(redisScript, keys, args)
			.single()
			.map(SpringDataRedisScriptExecutor::integers)
			.toFuture();
	}

	private static List<Long> integers(List<?> reply) {
		List<Long> integers = new ArrayList<>(reply.size());
		for (Object value : reply) {
			if (!(value instanceof Long integer)) {
				throw new IllegalStateException("Expected integers from the rate limiting script, got " + reply);
			}
			integers.add(integer);
		}
		return integers;
	}

}
