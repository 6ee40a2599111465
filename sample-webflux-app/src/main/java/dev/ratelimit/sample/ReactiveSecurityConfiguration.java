package dev.ratelimit.sample;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;

/**
 * The Spring MVC sample's security on WebFlux: everyone gets into the demo endpoints, a request with HTTP Basic
 * credentials of {@code alice} or {@code bob} is theirs, so that {@code /demo/user} limits each user on their
 * own, and the Actuator endpoints ({@code ratelimit}, {@code health}, {@code metrics}) are for the user
 * {@code admin} alone.
 */
@Configuration(proxyBeanMethods = false)
class ReactiveSecurityConfiguration {

	@Bean
	SecurityWebFilterChain securityWebFilterChain(ServerHttpSecurity http) {
		return http
			.authorizeExchange((exchanges) -> exchanges.pathMatchers("/actuator/**")
				.hasRole("ADMIN")
				.anyExchange()
				.permitAll())
			.httpBasic(Customizer.withDefaults())
			.csrf((csrf) -> csrf.disable())
			.build();
	}

	@Bean
	MapReactiveUserDetailsService users() {
		return new MapReactiveUserDetailsService(User.withUsername("alice").password("{noop}alice-password").build(),
				User.withUsername("bob").password("{noop}bob-password").build(),
				User.withUsername("admin").password("{noop}admin-password").roles("ADMIN").build());
	}

}
