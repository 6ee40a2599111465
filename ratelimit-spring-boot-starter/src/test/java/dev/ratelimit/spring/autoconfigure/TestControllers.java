package dev.ratelimit.spring.autoconfigure;

import java.util.concurrent.Callable;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.spring.RateLimited;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Controllers exercising every way to declare a limit.
 */
final class TestControllers {

	private TestControllers() {
	}

	@RestController
	static class LimitedController {

		@GetMapping("/gcra")
		@RateLimited(limit = 10, window = "10s")
		String gcra() {
			return "ok";
		}

		@GetMapping("/fixed")
		@RateLimited(limit = 2, window = "10s", algorithm = Algorithm.FIXED_WINDOW, name = "fixed")
		String fixed() {
			return "ok";
		}

		@GetMapping("/stacked")
		@RateLimited(limit = 2, window = "1s", name = "per-second")
		@RateLimited(limit = 3, window = "1m", name = "per-minute")
		String stacked() {
			return "ok";
		}

		@GetMapping("/global")
		@RateLimited(limit = 2, window = "10s", name = "per-client")
		@RateLimited(limit = 3, window = "10s", name = "everyone", key = "global")
		String global() {
			return "ok";
		}

		@GetMapping("/user")
		@RateLimited(limit = 1, window = "10s", key = "user")
		String user() {
			return "ok";
		}

		@GetMapping("/header")
		@RateLimited(limit = 1, window = "10s", key = "header:X-Api-Key")
		String header() {
			return "ok";
		}

		@GetMapping("/tenants/{tenant}")
		@RateLimited(limit = 1, window = "10s", key = "spel:#tenant + '/' + #region")
		String tenant(@PathVariable String tenant, @RequestParam(defaultValue = "eu") String region) {
			return tenant;
		}

		@GetMapping("/resolved")
		@RateLimited(limit = 1, window = "10s", key = "bean:apiKeyResolver")
		String resolved() {
			return "ok";
		}

		@GetMapping("/async")
		@RateLimited(limit = 1, window = "10s")
		Callable<String> async() {
			return () -> "ok";
		}

		@GetMapping("/free")
		String free() {
			return "ok";
		}

		@GetMapping("/items/{id}")
		String item(@PathVariable String id) {
			return id;
		}

	}

	@RestController
	@RateLimited(limit = 2, window = "10s")
	static class ClassLevelController {

		@GetMapping("/class/a")
		String a() {
			return "a";
		}

		@GetMapping("/class/b")
		String b() {
			return "b";
		}

		@GetMapping("/class/own")
		@RateLimited(limit = 5, window = "10s", name = "own")
		String own() {
			return "own";
		}

	}

}
