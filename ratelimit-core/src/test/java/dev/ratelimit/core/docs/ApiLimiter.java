package dev.ratelimit.core.docs;

import java.time.Duration;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;

/**
 * The first example of docs/core.md: 10 requests per 10 seconds for each client address.
 */
class ApiLimiter {

	private final RateLimitStore store = InMemoryRateLimitStore.builder().maxKeys(100_000).build();

	private final RateLimiter limiter = this.store
		.limiter(RateLimitPolicy.of("api", Algorithm.GCRA, 10, Duration.ofSeconds(10)));

	/** How long the client must wait before its request would pass: zero if it passes now. */
	Duration admit(String clientAddress) {
		Decision decision = this.limiter.decide(clientAddress);
		return decision.allowed() ? Duration.ZERO : decision.retryAfter();   // the exact wait
	}

}
