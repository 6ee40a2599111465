package dev.ratelimit.docs;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.spring.RateLimiters;

import org.springframework.stereotype.Service;

/**
 * The documentation's calls to a partner's API that wait for their permit under the policy {@code partner-api}
 * rather than fail at once.
 */
@Service
class PatientPartnerClient {

	private final RateLimiters limiters;

	PatientPartnerClient(RateLimiters limiters) {
		this.limiters = limiters;
	}

	String quoteWithin(String customer) throws InterruptedException {
		RateLimiter partner = this.limiters.limiter("partner-api");
		Decision decision = partner.acquire(customer, Duration.ofSeconds(2));   // blocks until the permit is due
		if (!decision.allowed()) {
			throw new PartnerBusyException(decision.retryAfter());   // would have waited more than 2 s
		}
		return call(customer);
	}

	CompletableFuture<String> quoteLater(String customer) {
		RateLimiter partner = this.limiters.limiter("partner-api");
		return partner.acquireAsync(customer, Duration.ofSeconds(2))
			.thenApply((reserved) -> reserved.allowed() ? call(customer) : "busy");
	}

	private String call(String customer) {
		return "partner's quote for " + customer;
	}

	/** The partner cannot take the call within the wait the caller accepts. */
	static class PartnerBusyException extends RuntimeException {

		PartnerBusyException(Duration retryAfter) {
			super("The partner is busy for another " + retryAfter);
		}

	}

}
