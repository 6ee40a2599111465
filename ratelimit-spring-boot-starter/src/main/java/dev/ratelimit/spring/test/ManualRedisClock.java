package dev.ratelimit.spring.test;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.spring.autoconfigure.RedisRateLimitStoreBuilderCustomizer;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.Ordered;

/**
 * Has the Redis store of a test read the context's {@link ManualTimeSource}, if its clock is one, instead of
 * Redis' {@code TIME}; first, so that the application's own customizers have the last word.
 */
class ManualRedisClock implements RedisRateLimitStoreBuilderCustomizer, Ordered {

	private final ObjectProvider<TimeSource> timeSource;

	ManualRedisClock(ObjectProvider<TimeSource> timeSource) {
		this.timeSource = timeSource;
	}

	@Override
	public void customize(RedisRateLimitStore.Builder builder) {
		if (this.timeSource.getIfUnique() instanceof ManualTimeSource manual) {
			builder.timeSource(manual);
		}
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

}
