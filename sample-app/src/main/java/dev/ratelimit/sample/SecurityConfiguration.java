package dev.ratelimit.sample;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * Lets everyone into the demo endpoints, and tells who a request comes from when it carries HTTP Basic
 * credentials of one of two demo users, so that {@code /demo/user} can limit each user on their own. The
 * Actuator endpoints ({@code ratelimit}, {@code health}, {@code metrics}) are for the user {@code admin} alone.
 */
@Configuration(proxyBeanMethods = false)
class SecurityConfiguration {

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
		return http
			.authorizeHttpRequests((requests) -> requests.requestMatchers("/actuator/**")
				.hasRole("ADMIN")
				.anyRequest()
				.permitAll())
			.httpBasic(Customizer.withDefaults())
			.csrf((csrf) -> csrf.disable())
			.build();
	}

	@Bean
	InMemoryUserDetailsManager users() {
		return new InMemoryUserDetailsManager(User.withUsername("alice").password("{noop}alice-password").build(),
				User.withUsername("bob").password("{noop}bob-password").build(),
				User.withUsername("admin").password("{noop}admin-password").roles("ADMIN").build());
	}

}
