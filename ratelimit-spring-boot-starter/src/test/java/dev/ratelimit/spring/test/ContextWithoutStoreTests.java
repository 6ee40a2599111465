package dev.ratelimit.spring.test;

import dev.ratelimit.core.RateLimitStore;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.junit.jupiter.SpringJUnitConfig;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The test kit in a plain Spring test whose context has none of the starter's beans: it resets nothing and fails
 * nothing.
 */
@SpringJUnitConfig(ContextWithoutStoreTests.Empty.class)
class ContextWithoutStoreTests {

	@Autowired
	private ApplicationContext context;

	@Test
	void runsWithoutAStore() {
		assertThat(this.context.getBeanNamesForType(RateLimitStore.class)).isEmpty();
	}

	@Configuration(proxyBeanMethods = false)
	static class Empty {

	}

}
