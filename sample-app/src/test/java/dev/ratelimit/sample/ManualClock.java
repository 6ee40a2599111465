package dev.ratelimit.sample;

import java.time.Duration;

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

	/**
	 * Moves {@code time} to the next midnight: longer than any window of the sample, and a whole number of each
	 * since the store was built at 0, so that every key is full again and fixed windows stay aligned with a
	 * reference store's.
	 */
	static void startNextDay(ManualTimeSource time) {
		long day = Duration.ofDays(1).toNanos();
		time.set((time.nanoTime() / day + 1) * day);
	}

}
