package dev.ratelimit.core.docs;

import java.time.Duration;
import java.util.List;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the examples of docs/core.md, the core used without Spring, as written there.
 */
class CoreExamplesTests {

	@Test
	void limitsOneClientToTenRequestsPerTenSeconds() {
		ApiLimiter limiter = new ApiLimiter();
		for (int i = 0; i < 10; i++) {
			assertThat(limiter.admit("203.0.113.7")).isZero();
		}
		assertThat(limiter.admit("203.0.113.7")).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(1));
		assertThat(limiter.admit("203.0.113.8")).isZero();
	}

	@Test
	void stacksAClientsLimitUnderOneForEveryoneAndGivesBackWhatShouldNotCount() {
		RateLimitStore store = InMemoryRateLimitStore.builder().timeSource(new ManualTimeSource()).build();
		RateLimitPolicy perClient = RateLimitPolicy.of("client", Algorithm.GCRA, 5, Duration.ofSeconds(10));
		RateLimitPolicy allClients = RateLimitPolicy.of("all", Algorithm.GCRA, 8, Duration.ofSeconds(10));
		for (int request = 0; request < 20; request++) {
			String clientAddress = "203.0.113." + (request % 2);
			int response = (request % 4 == 0) ? 500 : 200;
			List<KeyedPolicy> limits = List.of(new KeyedPolicy(clientAddress, perClient),
					new KeyedPolicy("everyone", allClients));
			List<Decision> decisions = store.decideAll(limits);
			if (decisions.get(0).allowed() && !countsAgainstTheQuota(response)) {
				store.giveBack(limits, decisions);
			}
		}
		// the ceiling of 8 is reached with 5 of the second client and 3 of the first, whose failed requests
		// (every other one) were given back; this request of the first takes its fourth permit
		assertThat(store.limiter(allClients).decide("everyone").allowed()).isFalse();
		assertThat(store.limiter(perClient).decide("203.0.113.1").allowed()).isFalse();
		assertThat(store.limiter(perClient).decide("203.0.113.0").remaining()).isEqualTo(1);
	}

	private static boolean countsAgainstTheQuota(int status) {
		return status < 500;
	}

}
