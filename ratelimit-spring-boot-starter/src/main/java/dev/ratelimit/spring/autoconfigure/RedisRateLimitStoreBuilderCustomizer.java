package dev.ratelimit.spring.autoconfigure;

import dev.ratelimit.core.redis.RedisRateLimitStore;

/**
 * Customizes the builder of the auto-configured {@link RedisRateLimitStore} after the {@code ratelimit.redis.*}
 * properties were applied, for what properties do not cover, such as a failure listener or, in tests, a time
 * source. Every bean of this type is applied, in order.
 */
@FunctionalInterface
public interface RedisRateLimitStoreBuilderCustomizer {

	/**
	 * Customizes the builder.
	 * @param builder the builder to customize
	 */
	void customize(RedisRateLimitStore.Builder builder);

}
