package dev.ratelimit.docs.testing;

import dev.ratelimit.spring.RateLimited;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The endpoint of docs/testing.md: a report that is expensive to make, one an hour per client address.
 */
@RestController
class ReportController {

	@GetMapping("/report")
	@RateLimited(limit = 1, window = "1h")
	String report() {
		return "report";
	}

}
