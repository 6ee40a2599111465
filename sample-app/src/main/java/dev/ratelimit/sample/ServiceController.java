package dev.ratelimit.sample;

import java.util.concurrent.CompletableFuture;

import dev.ratelimit.spring.RateLimiters;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Limits beyond the controller: the controller itself declares none, the service it calls does, and a call to a
 * partner is limited in code under the policy {@code partner-api} of application.yml.
 */
@RestController
@RequestMapping("/demo")
public class ServiceController {

	private final QuoteService quotes;

	private final RateLimiters limiters;

	public ServiceController(QuoteService quotes, RateLimiters limiters) {
		this.quotes = quotes;
		this.limiters = limiters;
	}

	/** 3 calls per 10 seconds per customer, limited on {@link QuoteService#quote}. */
	@GetMapping("/service")
	String service(@RequestParam String customer) {
		return this.quotes.quote(customer);
	}

	/** The same on a service method that returns a {@code CompletableFuture}. */
	@GetMapping("/service-async")
	CompletableFuture<String> serviceAsync(@RequestParam String customer) {
		return this.quotes.quoteLater(customer);
	}

	/** 2 calls per 10 seconds per customer to the partner, limited in code. */
	@GetMapping("/code")
	String code(@RequestParam String customer) {
		this.limiters.acquire("partner-api", customer);
		return "partner called for " + customer + "\n";
	}

}
