package dev.ratelimit.sample;

import java.util.concurrent.CompletableFuture;

import dev.ratelimit.spring.RateLimited;

import org.springframework.stereotype.Service;

/**
 * A service whose calls are limited per customer, wherever they come from: a controller, a listener, a job.
 * Over the limit, a call throws {@link dev.ratelimit.spring.RateLimitExceededException}, or returns a future
 * failed with it, which a controller that lets it out answers with 429.
 */
@Service
public class QuoteService {

	/** At most 3 quotes per 10 seconds per customer. */
	@RateLimited(limit = 3, window = "10s", key = "#customer", name = "service")
	public String quote(String customer) {
		return "quote for " + customer + "\n";
	}

	/** The same limit on a method that answers later. */
	@RateLimited(limit = 3, window = "10s", key = "#customer", name = "service-async")
	public CompletableFuture<String> quoteLater(String customer) {
		return CompletableFuture.completedFuture("quote for " + customer + ", later\n");
	}

}
