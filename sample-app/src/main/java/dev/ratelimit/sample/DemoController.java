package dev.ratelimit.sample;

import java.security.Principal;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import dev.ratelimit.core.TimeSource;
import dev.ratelimit.spring.RateLimited;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import static dev.ratelimit.core.Algorithm.FIXED_WINDOW;
import static dev.ratelimit.core.Algorithm.GCRA;
import static dev.ratelimit.core.Algorithm.LEAKY_BUCKET;
import static dev.ratelimit.core.Algorithm.SLIDING_LOG;
import static dev.ratelimit.core.Algorithm.SLIDING_WINDOW_COUNTER;
import static dev.ratelimit.core.Algorithm.TOKEN_BUCKET;

/**
 * The article's limit, 10 requests per 10 seconds by client address, under each algorithm, and the other ways
 * to declare a limit.
 */
@RestController
@RequestMapping("/demo")
public class DemoController {

	private final TimeSource time;

	DemoController(TimeSource time) {
		this.time = time;
	}

	/**
	 * A report that takes two seconds, and fails at its end if asked to: at most 2 of a client's in flight at
	 * once, besides 100 a minute. It waits on the limiters' clock without holding a thread, so that a test moves
	 * the clock to end it.
	 */
	@GetMapping("/concurrent")
	@RateLimited(limit = 100, window = "1m", concurrency = 2, name = "concurrent")
	CompletableFuture<String> concurrent(@RequestParam(defaultValue = "false") boolean fail) {
		return this.time.after(Duration.ofSeconds(2).toNanos()).thenApply((done) -> {
			if (fail) {
				throw new ReportFailedException();
			}
			return "report\n";
		});
	}

	/** A report that failed: a 500 problem, without a stack trace in the log, since the failure is on purpose. */
	@ExceptionHandler
	ProblemDetail reportFailed(ReportFailedException ex) {
		return ProblemDetail.forStatusAndDetail(HttpStatus.INTERNAL_SERVER_ERROR, ex.getMessage());
	}

	@GetMapping("/fixed-window")
	@RateLimited(limit = 10, window = "10s", algorithm = FIXED_WINDOW)
	String fixedWindow() {
		return "fixed window\n";
	}

	@GetMapping("/sliding-log")
	@RateLimited(limit = 10, window = "10s", algorithm = SLIDING_LOG)
	String slidingLog() {
		return "sliding log\n";
	}

	@GetMapping("/sliding-window-counter")
	@RateLimited(limit = 10, window = "10s", algorithm = SLIDING_WINDOW_COUNTER)
	String slidingWindowCounter() {
		return "sliding window counter\n";
	}

	@GetMapping("/token-bucket")
	@RateLimited(limit = 10, window = "10s", algorithm = TOKEN_BUCKET)
	String tokenBucket() {
		return "token bucket\n";
	}

	/** Holds each request in a queue of 10 until its slot, one a second; rejects when the queue is full. */
	@GetMapping("/leaky-bucket")
	@RateLimited(limit = 10, window = "10s", algorithm = LEAKY_BUCKET)
	String leakyBucket() {
		return "leaky bucket\n";
	}

	@GetMapping("/gcra")
	@RateLimited(limit = 10, window = "10s", algorithm = GCRA)
	String gcra() {
		return "gcra\n";
	}

	/** {@code /demo/gcra} without a limit: the baseline against which the benchmarks measure what a limit costs. */
	@GetMapping("/unlimited")
	String unlimited() {
		return "gcra\n";
	}

	/** Each signed-in user has a quota of their own; anonymous requests are limited by address. */
	@GetMapping("/user")
	@RateLimited(limit = 10, window = "10s", key = "user")
	String user(@Nullable Principal principal) {
		return "hello " + ((principal != null) ? principal.getName() : "anonymous") + "\n";
	}

	/**
	 * Each signed-in customer's quota from its record (CustomerRecords: alice 5 per 10 seconds, bob 2), 1 per 10
	 * seconds for anyone else.
	 */
	@GetMapping("/customer")
	@RateLimited(limit = 1, window = "10s", key = "user", name = "customer")
	String customer(@Nullable Principal principal) {
		return "hello " + ((principal != null) ? principal.getName() : "anonymous") + "\n";
	}

	/** At most 3 requests a second and 10 per 10 seconds; a request denied by one takes nothing from the other. */
	@GetMapping("/stacked")
	@RateLimited(limit = 3, window = "1s", name = "stacked-per-second")
	@RateLimited(limit = 10, window = "10s", name = "stacked-per-10s")
	String stacked() {
		return "stacked\n";
	}

	/**
	 * 5 requests per 10 seconds for each client address under 8 per 10 seconds for all clients together; a
	 * request that one limit denies takes nothing from the other.
	 */
	@GetMapping("/global")
	@RateLimited(limit = 5, window = "10s", name = "global-per-client")
	@RateLimited(limit = 8, window = "10s", name = "global-all-clients", key = "global")
	String global() {
		return "global\n";
	}

	/** 3 requests per 10 seconds; the fourth puts the client under a penalty: refused for a minute. */
	@GetMapping("/penalty")
	@RateLimited(limit = 3, window = "10s", penalty = "60s", name = "penalty")
	String penalty() {
		return "penalty\n";
	}

	/** 5 requests per calendar day in Berlin: the quota is whole again at every midnight there. */
	@GetMapping("/daily")
	@RateLimited(limit = 5, window = "calendar day in Europe/Berlin", algorithm = FIXED_WINDOW, name = "daily")
	String daily() {
		return "daily\n";
	}

	/** Declares 10 per 10 seconds; application.yml lowers it under ratelimit.policies.overridden. */
	@GetMapping("/overridden")
	@RateLimited(limit = 10, window = "10s", name = "overridden")
	String overridden() {
		return "overridden\n";
	}

	/** Carries no annotation: ratelimit.rules in application.yml limits it. */
	@GetMapping("/yaml-only")
	String yamlOnly() {
		return "yaml only\n";
	}

	/** How {@code /demo/concurrent?fail=true} ends. */
	static final class ReportFailedException extends RuntimeException {

		ReportFailedException() {
			super("the report failed");
		}

	}

}
