package dev.ratelimit.spring.test;

import dev.ratelimit.spring.RateLimited;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.security.autoconfigure.ReactiveUserDetailsServiceAutoConfiguration;
import org.springframework.boot.security.autoconfigure.UserDetailsServiceAutoConfiguration;
import org.springframework.boot.security.autoconfigure.actuate.web.reactive.ReactiveManagementWebSecurityAutoConfiguration;
import org.springframework.boot.security.autoconfigure.actuate.web.servlet.ManagementWebSecurityAutoConfiguration;
import org.springframework.boot.security.autoconfigure.web.reactive.ReactiveWebSecurityAutoConfiguration;
import org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * An application as a user writes one, whose tests use the test kit as the user's would: found by
 * {@code @SpringBootTest} and the slices, scanning its package. Spring Security, on the test class path for other
 * tests, is left out: it would secure the endpoint.
 */
@SpringBootApplication(exclude = { ServletWebSecurityAutoConfiguration.class,
		ManagementWebSecurityAutoConfiguration.class, UserDetailsServiceAutoConfiguration.class,
		ReactiveWebSecurityAutoConfiguration.class, ReactiveUserDetailsServiceAutoConfiguration.class,
		ReactiveManagementWebSecurityAutoConfiguration.class })
class KitApplication {

	/** One call an hour, on either web stack. */
	@RestController
	static class HourlyController {

		@RateLimited(limit = 1, window = "1h")
		@GetMapping("/hourly")
		String hourly() {
			return "served";
		}

	}

}
