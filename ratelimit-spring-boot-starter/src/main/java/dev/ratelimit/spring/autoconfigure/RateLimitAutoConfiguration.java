package dev.ratelimit.spring.autoconfigure;

import java.util.Locale;

import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration of the {@link RateLimitStore}: in memory by default, in Redis with
 * {@code ratelimit.store=redis} through the application's Spring Data Redis connection; and, with Micrometer,
 * decision metrics.
 */
@AutoConfiguration(afterName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@ConditionalOnBooleanProperty(name = "ratelimit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
public final class RateLimitAutoConfiguration {

	private static final String REDIS_CONNECTION_FACTORY = "org.springframework.data.redis.connection.RedisConnectionFactory";

	@Bean
	@ConditionalOnMissingBean
	TimeSource rateLimitTimeSource() {
		return TimeSource.system();
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(name = "ratelimit.store", havingValue = "memory", matchIfMissing = true)
	static class InMemoryStoreConfiguration {

		@Bean
		@ConditionalOnMissingBean(RateLimitStore.class)
		InMemoryRateLimitStore rateLimitStore(RateLimitProperties properties, TimeSource timeSource) {
			return InMemoryRateLimitStore.builder().timeSource(timeSource).maxKeys(properties.getMaxKeys()).build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(name = "ratelimit.store", havingValue = "redis")
	@ConditionalOnMissingClass(REDIS_CONNECTION_FACTORY)
	static class MissingRedisConfiguration {

		@Bean
		@ConditionalOnMissingBean(RateLimitStore.class)
		RateLimitStore rateLimitStore() {
			throw new RateLimitConfigurationException(
					"ratelimit.store is redis, but Spring Data Redis is not on the classpath.",
					"Add org.springframework.boot:spring-boot-starter-data-redis to the application, or set ratelimit.store=memory.");
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterRegistry.class)
	static class MetricsConfiguration {

		@Bean
		@ConditionalOnMissingBean
		MicrometerRateLimitMetrics rateLimitMetrics(ObjectProvider<MeterRegistry> registries,
				RateLimitProperties properties) {
			return new MicrometerRateLimitMetrics(registries, properties.getStore().name().toLowerCase(Locale.ROOT));
		}

	}

}
