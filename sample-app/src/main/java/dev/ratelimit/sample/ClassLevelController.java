package dev.ratelimit.sample;

import dev.ratelimit.spring.RateLimited;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * One limit declared on the class: both endpoints draw from one quota of 10 requests per 10 seconds.
 */
@RestController
@RequestMapping("/demo/class")
@RateLimited(limit = 10, window = "10s")
public class ClassLevelController {

	@GetMapping("/a")
	String a() {
		return "class a\n";
	}

	@GetMapping("/b")
	String b() {
		return "class b\n";
	}

}
