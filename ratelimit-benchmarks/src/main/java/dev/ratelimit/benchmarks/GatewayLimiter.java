package dev.ratelimit.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimit.core.RateLimitPolicy;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.cloud.gateway.filter.ratelimit.RedisRateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.core.convert.support.DefaultConversionService;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.DefaultRedisScript;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Spring Cloud Gateway's {@link RedisRateLimiter}, built as its auto-configuration builds it (its own
 * {@code META-INF/scripts/request_rate_limiter.lua}, a {@link ReactiveStringRedisTemplate}) and configured for one
 * route as a token bucket with a policy's rate per second and burst (see {@link #config(RateLimitPolicy)}), one token
 * a request.
 * <p>
 * The gateway's limiter allows a request when its script fails, and reports {@value #FAILED_REMAINING} tokens
 * left; such a decision is counted as one made without Redis.
 */
final class GatewayLimiter {

	/** The route every decision is made for, as a gateway route's id. */
	static final String ROUTE = "bench";

	/** Where the gateway's script is, in its jar. */
	static final String SCRIPT = "META-INF/scripts/request_rate_limiter.lua";

	/** The tokens left that the gateway reports when its script failed and it allowed the request anyway. */
	private static final String FAILED_REMAINING = "-1";

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private GatewayLimiter() {
	}

	static RedisContender.Limiter of(ReactiveRedisConnectionFactory connections, RateLimitPolicy policy,
			AtomicLong fallbacks) {
		RedisRateLimiter gateway = new RedisRateLimiter(new ReactiveStringRedisTemplate(connections), script(),
				new ConfigurationService(new DefaultListableBeanFactory(), DefaultConversionService::new, () -> null));
		gateway.getConfig().put(ROUTE, config(policy));
		return (key, bytes) -> {
			RateLimiter.Response response = gateway.isAllowed(ROUTE, key).block(TIMEOUT);
			if (response == null) {
				throw new IllegalStateException("the gateway's limiter gave no response for " + key);
			}
			if (FAILED_REMAINING.equals(response.getHeaders().get(gateway.getRemainingHeader()))) {
				fallbacks.incrementAndGet();
			}
			return response.isAllowed();
		};
	}

	/**
	 * The gateway's configuration of a policy: its rate is a whole number of tokens per second, so a policy whose
	 * rate is not one is refused rather than rounded. The gateway refuses a burst below one second of its rate
	 * (its script counts time in whole seconds), so a smaller burst is raised to that, the least it holds: a
	 * policy under which every call is allowed makes the gateway do the same work either way.
	 */
	static RedisRateLimiter.Config config(RateLimitPolicy policy) {
		long nanos = policy.window().toNanos();
		long scaled = Math.multiplyExact(policy.limit(), 1_000_000_000L);
		if (scaled % nanos != 0 || scaled / nanos > Integer.MAX_VALUE) {
			throw new IllegalArgumentException("the gateway's rate is a whole number per second up to "
					+ Integer.MAX_VALUE + ", not " + policy.limit() + " per " + policy.window() + " (" + policy.name()
					+ ")");
		}
		int perSecond = (int) (scaled / nanos);
		return new RedisRateLimiter.Config().setReplenishRate(perSecond)
			.setBurstCapacity(Math.max(policy.burst(), perSecond))
			.setRequestedTokens(1);
	}

	@SuppressWarnings({ "unchecked", "rawtypes" })
	private static RedisScript<List<Long>> script() {
		DefaultRedisScript script = new DefaultRedisScript<>();
		script.setLocation(new ClassPathResource(SCRIPT));
		script.setResultType(List.class);
		return script;
	}

}
