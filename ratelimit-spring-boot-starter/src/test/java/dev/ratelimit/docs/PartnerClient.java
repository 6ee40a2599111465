package dev.ratelimit.docs;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.spring.RateLimiters;

import org.springframework.stereotype.Service;

/**
 * The documentation's calls to a partner's API, limited in code under the policy {@code partner-api}.
 */
@Service
class PartnerClient {

	private final RateLimiters limiters;

	PartnerClient(RateLimiters limiters) {
		this.limiters = limiters;
	}

	String quote(String customer) {
		this.limiters.acquire("partner-api", customer);   // throws RateLimitExceededException: 429
		return "partner's quote for " + customer;
	}

	boolean tryQuote(String customer) {
		RateLimiter partner = this.limiters.limiter("partner-api");
		return partner.tryAcquire(customer);   // false over the limit
	}

	Decision takeTwo(String customer) {
		RateLimiter partner = this.limiters.limiter("partner-api");
		return partner.decide(customer, 2);   // two permits of the same quota
	}

}
