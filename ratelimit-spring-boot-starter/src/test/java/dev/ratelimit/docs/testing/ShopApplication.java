package dev.ratelimit.docs.testing;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.security.autoconfigure.ReactiveUserDetailsServiceAutoConfiguration;
import org.springframework.boot.security.autoconfigure.UserDetailsServiceAutoConfiguration;
import org.springframework.boot.security.autoconfigure.actuate.web.reactive.ReactiveManagementWebSecurityAutoConfiguration;
import org.springframework.boot.security.autoconfigure.actuate.web.servlet.ManagementWebSecurityAutoConfiguration;
import org.springframework.boot.security.autoconfigure.web.reactive.ReactiveWebSecurityAutoConfiguration;
import org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration;

/**
 * The application that the recipes of docs/testing.md test, found by {@code @SpringBootTest} and the slices as a
 * user's is. Spring Security, on the test class path for other tests, is left out: it would secure the endpoint.
 */
@SpringBootApplication(exclude = { ServletWebSecurityAutoConfiguration.class,
		ManagementWebSecurityAutoConfiguration.class, UserDetailsServiceAutoConfiguration.class,
		ReactiveWebSecurityAutoConfiguration.class, ReactiveUserDetailsServiceAutoConfiguration.class,
		ReactiveManagementWebSecurityAutoConfiguration.class })
class ShopApplication {

}
