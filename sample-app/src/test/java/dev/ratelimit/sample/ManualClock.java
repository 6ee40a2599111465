package dev.ratelimit.sample;

import dev.ratelimit.core.ManualTimeSource;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * Replaces the system clock of the rate limiting stores with one that tests move by hand.
 */
@TestConfiguration(proxyBeanMethods = false)
class ManualClock {

	@Bean
	ManualTimeSource timeSource() {
		return new ManualTimeSource();
	}

}
