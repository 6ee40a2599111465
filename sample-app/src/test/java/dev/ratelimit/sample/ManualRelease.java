package dev.ratelimit.sample;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.testing.ManualScheduler;
import dev.ratelimit.spring.autoconfigure.RateLimitAutoConfiguration;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * Replaces the scheduler that releases held requests with one on the tests' clock: a held request is released
 * when a test moves the clock to its slot.
 */
@TestConfiguration(proxyBeanMethods = false)
class ManualRelease {

	@Bean(name = RateLimitAutoConfiguration.SHAPING_SCHEDULER_BEAN_NAME)
	ManualScheduler rateLimitShapingScheduler(ManualTimeSource time) {
		return new ManualScheduler(time);
	}

}
