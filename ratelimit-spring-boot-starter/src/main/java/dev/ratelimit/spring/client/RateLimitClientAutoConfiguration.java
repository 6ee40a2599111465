package dev.ratelimit.spring.client;

import java.time.Duration;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.web.client.RestClient;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration Auto-configuration} of the client side,
 * active when {@code ratelimit.client.enabled=true}: a {@link RateLimitClientInterceptor} built from
 * {@link RateLimitClientProperties} and, with {@code spring-boot-restclient} present, a
 * {@link RateLimitClientCustomizer} that adds it to the {@code RestClient.Builder} and {@code RestTemplateBuilder}
 * that Spring Boot provides. A bean of either type defined by the application is used instead.
 */
@AutoConfiguration
@ConditionalOnClass(ClientHttpRequestInterceptor.class)
@ConditionalOnBooleanProperty("ratelimit.client.enabled")
@EnableConfigurationProperties(RateLimitClientProperties.class)
public final class RateLimitClientAutoConfiguration {

	private static final String PREFIX = "ratelimit.client.";

	@Bean
	@ConditionalOnMissingBean
	RateLimitClientInterceptor rateLimitClientInterceptor(RateLimitClientProperties properties) {
		requirePositive("base-delay", properties.getBaseDelay());
		requirePositive("max-delay", properties.getMaxDelay());
		if (properties.getBaseDelay().compareTo(properties.getMaxDelay()) > 0) {
			throw new InvalidConfigurationPropertyValueException(PREFIX + "base-delay", properties.getBaseDelay(),
					"must not be greater than " + PREFIX + "max-delay (" + properties.getMaxDelay() + ")");
		}
		if (properties.getMaxAttempts() < 1) {
			throw new InvalidConfigurationPropertyValueException(PREFIX + "max-attempts", properties.getMaxAttempts(),
					"must be at least 1");
		}
		if (properties.getMaxTotalWait() == null || properties.getMaxTotalWait().isNegative()) {
			throw new InvalidConfigurationPropertyValueException(PREFIX + "max-total-wait",
					properties.getMaxTotalWait(), "must be zero or positive");
		}
		return RateLimitClientInterceptor.builder()
			.baseDelay(properties.getBaseDelay())
			.maxDelay(properties.getMaxDelay())
			.maxAttempts(properties.getMaxAttempts())
			.maxTotalWait(properties.getMaxTotalWait())
			.retryNonIdempotent(properties.isRetryNonIdempotent())
			.pace(properties.isPace())
			.build();
	}

	private static void requirePositive(String name, Duration value) {
		if (value == null || value.isNegative() || value.isZero()) {
			throw new InvalidConfigurationPropertyValueException(PREFIX + name, value, "must be positive");
		}
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ RestClient.class, RestClientCustomizer.class })
	static class RestClientConfiguration {

		@Bean
		@ConditionalOnMissingBean
		RateLimitClientCustomizer rateLimitClientCustomizer(RateLimitClientInterceptor rateLimitClientInterceptor) {
			return new RateLimitClientCustomizer(rateLimitClientInterceptor);
		}

	}

}
