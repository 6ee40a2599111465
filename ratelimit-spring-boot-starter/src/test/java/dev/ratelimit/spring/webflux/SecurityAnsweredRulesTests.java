package dev.ratelimit.spring.webflux;

import dev.ratelimit.spring.autoconfigure.RateLimitAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.reactive.EnableWebFluxSecurity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests that on Spring WebFlux, as on Spring MVC, a rule on a path that Spring Security's reactive filters answer
 * is reported at startup, naming the rule and the filter.
 */
@ExtendWith(OutputCaptureExtension.class)
class SecurityAnsweredRulesTests {

	private static final String[] LOGIN_AND_LOGOUT_RULES = { "ratelimit.rules[0].path=/login",
			"ratelimit.rules[0].limit=5", "ratelimit.rules[0].window=1m", "ratelimit.rules[1].path=/logout",
			"ratelimit.rules[1].limit=5", "ratelimit.rules[1].window=1m", "ratelimit.rules[2].path=/**",
			"ratelimit.rules[2].limit=5", "ratelimit.rules[2].window=1m" };

	private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitWebFluxAutoConfiguration.class, WebFluxAutoConfiguration.class));

	@Test
	void warnsOfRulesOnThePagesOfFormLogin(CapturedOutput output) {
		this.runner.withUserConfiguration(Users.class, FormLogin.class)
			.withPropertyValues(LOGIN_AND_LOGOUT_RULES)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output)
					.contains("ratelimit.rules[0] (/login) never applies to /login: Spring Security's "
							+ "LoginPageGeneratingWebFilter answers it before Spring WebFlux, where this rule is decided. "
							+ "Set ratelimit.rules[0].before-security=true to decide it before Spring Security's filter "
							+ "chain.")
					.contains("ratelimit.rules[1] (/logout) never applies to /logout: Spring Security's "
							+ "LogoutPageGeneratingWebFilter answers it")
					.doesNotContain("ratelimit.rules[2]");
			});
	}

	@Test
	void warnsOfRulesOnThePagesOfTheDefaultChain(CapturedOutput output) {
		this.runner.withUserConfiguration(Users.class, DefaultChain.class)
			.withPropertyValues(LOGIN_AND_LOGOUT_RULES)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("ratelimit.rules[0] (/login) never applies to /login",
						"ratelimit.rules[1] (/logout) never applies to /logout");
			});
	}

	@Test
	void warnsOfLogoutAloneWithoutFormLogin(CapturedOutput output) {
		this.runner.withUserConfiguration(Users.class, BasicOnly.class)
			.withPropertyValues(LOGIN_AND_LOGOUT_RULES)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("ratelimit.rules[1] (/logout) never applies to /logout")
					.doesNotContain("ratelimit.rules[0] (/login) never applies");
			});
	}

	@Test
	void staysQuietAboutRulesDecidedBeforeSpringSecurity(CapturedOutput output) {
		this.runner.withUserConfiguration(Users.class, FormLogin.class)
			.withPropertyValues("ratelimit.rules[0].path=/login", "ratelimit.rules[0].limit=5",
					"ratelimit.rules[0].window=1m", "ratelimit.rules[0].before-security=true")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).doesNotContain("never applies");
			});
	}

	@Test
	void staysQuietWithoutSpringSecurity(CapturedOutput output) {
		this.runner.withPropertyValues(LOGIN_AND_LOGOUT_RULES).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(output).doesNotContain("never applies");
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class Users {

		@Bean
		MapReactiveUserDetailsService users() {
			return new MapReactiveUserDetailsService(
					User.withUsername("alice").password("{noop}alice-password").roles("USER").build());
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableWebFluxSecurity
	static class FormLogin {

		@Bean
		SecurityWebFilterChain securityWebFilterChain(ServerHttpSecurity http) {
			return http.formLogin(Customizer.withDefaults()).build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableWebFluxSecurity
	static class DefaultChain {

	}

	@Configuration(proxyBeanMethods = false)
	@EnableWebFluxSecurity
	static class BasicOnly {

		@Bean
		SecurityWebFilterChain securityWebFilterChain(ServerHttpSecurity http) {
			return http.httpBasic(Customizer.withDefaults()).build();
		}

	}

}
