package dev.ratelimit.sample;

import java.util.concurrent.Callable;

import dev.ratelimit.spring.RateLimiters;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The service and code limits of the Spring MVC sample's {@code ServiceController}, on WebFlux: the service's
 * methods and the limiter decide on the caller's thread, which may wait for Redis, so they run off the event
 * loop, as any blocking call in a WebFlux handler should.
 */
@RestController
@RequestMapping("/demo")
public class ReactiveServiceController {

	private final QuoteService quotes;

	private final RateLimiters limiters;

	public ReactiveServiceController(QuoteService quotes, RateLimiters limiters) {
		this.quotes = quotes;
		this.limiters = limiters;
	}

	/** 3 calls per 10 seconds per customer, limited on {@link QuoteService#quote}. */
	@GetMapping("/service")
	Mono<String> service(@RequestParam String customer) {
		return offEventLoop(() -> this.quotes.quote(customer));
	}

	/** The same on a service method that returns a {@code CompletableFuture}. */
	@GetMapping("/service-async")
	Mono<String> serviceAsync(@RequestParam String customer) {
		return offEventLoop(() -> this.quotes.quoteLater(customer)).flatMap(Mono::fromFuture);
	}

	/** 2 calls per 10 seconds per customer to the partner, limited in code. */
	@GetMapping("/code")
	Mono<String> code(@RequestParam String customer) {
		return offEventLoop(() -> {
			this.limiters.acquire("partner-api", customer);
			return "partner called for " + customer + "\n";
		});
	}

	private static <T> Mono<T> offEventLoop(Callable<T> call) {
		return Mono.fromCallable(call).subscribeOn(Schedulers.boundedElastic());
	}

}
