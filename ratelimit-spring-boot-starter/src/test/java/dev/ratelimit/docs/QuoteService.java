package dev.ratelimit.docs;

import java.util.concurrent.CompletableFuture;

import dev.ratelimit.spring.RateLimited;

import org.springframework.stereotype.Service;

/**
 * The documentation's limits on the methods of a bean that is no controller, keyed by their arguments.
 */
@Service
public class QuoteService {

	@RateLimited(limit = 3, window = "10s", key = "#customer")
	public String quote(String customer) {
		return "quote for " + customer;
	}

	@RateLimited(limit = 100, window = "1h", key = "#order.customerId()")
	public CompletableFuture<Receipt> place(Order order) {
		return CompletableFuture.completedFuture(new Receipt(order.customerId()));
	}

}
