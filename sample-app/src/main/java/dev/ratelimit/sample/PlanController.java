package dev.ratelimit.sample;

import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.RateLimited.Plan;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import static dev.ratelimit.core.Algorithm.TOKEN_BUCKET;

/**
 * Limits that depend on who the client is, and on what a request asks for.
 */
@RestController
@RequestMapping("/demo")
public class PlanController {

	/**
	 * Keyed by the API key, or by address without one; {@link ApiKeyPlans} puts each key on its plan: 3
	 * requests per 10 seconds on {@code free}, 10 on {@code pro} (set in application.yml).
	 */
	@GetMapping("/plan")
	@RateLimited(limit = 3, window = "10s", key = "header:X-Api-Key", name = "plan",
			plans = @Plan(name = "free", limit = 3))
	String plan() {
		return "plan\n";
	}

	/** A batch of {@code size} items takes {@code size} permits of 10 per 10 seconds. */
	@GetMapping("/batch")
	@RateLimited(limit = 10, window = "10s", algorithm = TOKEN_BUCKET, costExpression = "#size", name = "batch")
	String batch(@RequestParam int size) {
		return "batch of " + size + "\n";
	}

}
