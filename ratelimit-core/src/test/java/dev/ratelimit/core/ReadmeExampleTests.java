package dev.ratelimit.core;

import java.time.Duration;

import dev.ratelimit.core.memory.InMemoryRateLimitStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the README's example of the core used without Spring, as written there.
 */
class ReadmeExampleTests {

	@Test
	void limitsOneClientToTenRequestsPerTenSeconds() {
		String clientAddress = "203.0.113.7";
		int allowed = 0;
		Duration wait = Duration.ZERO;
		// README: "Using the core without Spring"
		RateLimitStore store = InMemoryRateLimitStore.builder().maxKeys(100_000).build();
		RateLimiter limiter = store.limiter(RateLimitPolicy.of("api", Algorithm.GCRA, 10, Duration.ofSeconds(10)));

		for (int i = 0; i < 11; i++) {
			Decision decision = limiter.decide(clientAddress);
			if (!decision.allowed()) {
				wait = decision.retryAfter();
			}
			else {
				allowed++;
			}
		}
		assertThat(allowed).isEqualTo(10);
		assertThat(wait).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(1));
	}

}
