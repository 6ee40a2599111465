package dev.ratelimit.sample;

import dev.ratelimit.spring.RateLimited;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

import static dev.ratelimit.core.Algorithm.GCRA;
import static dev.ratelimit.core.Algorithm.LEAKY_BUCKET;

/**
 * The article's nginx {@code limit_req} test, {@code rate=2r/s} with {@code burst=5}, in each of nginx's modes:
 * smoothing a burst instead of rejecting it. {@code /demo/shaping/yaml}, declared in {@code application.yml},
 * is the delay mode again.
 */
@RestController
@RequestMapping("/demo/shaping")
public class ShapingController {

	/** {@code limit_req zone=plain;} without a burst: one request at a time, the others are rejected. */
	@GetMapping("/plain")
	@RateLimited(limit = 2, window = "1s", burst = 1, algorithm = GCRA)
	String plain() {
		return "plain\n";
	}

	/** {@code limit_req zone=burst burst=5;}: up to 5 wait in the queue, released one every 0.5 s. */
	@GetMapping("/burst")
	@RateLimited(limit = 2, window = "1s", burst = 5, algorithm = LEAKY_BUCKET)
	String burst() {
		return "burst\n";
	}

	/** {@code limit_req zone=nodelay burst=5 nodelay;}: the whole queue passes at once. */
	@GetMapping("/nodelay")
	@RateLimited(limit = 2, window = "1s", burst = 5, algorithm = LEAKY_BUCKET, noDelay = true)
	String noDelay() {
		return "nodelay\n";
	}

	/** {@code limit_req zone=delay burst=5 delay=2;}: 2 of the queue pass at once, the others wait. */
	@GetMapping("/delay")
	@RateLimited(limit = 2, window = "1s", burst = 5, algorithm = LEAKY_BUCKET, delayAfter = 2)
	String delay() {
		return "delay\n";
	}

	/** Carries no annotation: a rule in application.yml shapes it like {@code /demo/shaping/delay}. */
	@GetMapping("/yaml")
	String yaml() {
		return "yaml\n";
	}

}
