package dev.ratelimit.spring.autoconfigure;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.webflux.RateLimitWebFluxAutoConfiguration;
import dev.ratelimit.spring.webmvc.RateLimitWebMvcAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configuration.EnableWebSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests that a declaration which could never limit a request stops the start, or is reported at startup,
 * naming it.
 */
@ExtendWith({ QuietOutput.class, OutputCaptureExtension.class })
class IneffectiveDeclarationTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitWebMvcAutoConfiguration.class, WebMvcAutoConfiguration.class));

	@Test
	void namesTheWebStackThatLimitsHandlers() {
		new ReactiveWebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
					RateLimitWebFluxAutoConfiguration.class, WebFluxAutoConfiguration.class))
			.withUserConfiguration(HelperController.class)
			.run((context) -> assertThat(cause(context.getStartupFailure()))
				.isInstanceOf(RateLimitConfigurationException.class)
				.hasMessageContaining("the method maps no request, and only Spring WebFlux handler methods "
						+ "(@RequestMapping, @GetMapping...) of a controller are limited."));
	}

	@Test
	void saysThatDeclarationsLimitNothingInAnApplicationWithoutAWebServer(CapturedOutput output) {
		Logger logger = (Logger) LoggerFactory.getLogger(UnservedDeclarations.class);
		logger.setLevel(Level.INFO);
		try {
			new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
				.withUserConfiguration(OrderController.class)
				.run((context) -> assertThat(output).contains("@RateLimited on controllers limits nothing here: this application "
						+ "serves no web requests, so 1 declaration is neither applied nor checked (@RateLimited on "
						+ OrderController.class.getName() + ".orders())."));
			new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
				.run((context) -> assertThat(output).containsOnlyOnce("@RateLimited on controllers limits nothing here"));
		}
		finally {
			logger.setLevel(null);
		}
	}

	@Test
	void stopsAnAnnotatedControllerMethodThatMapsNoRequest() {
		this.runner.withUserConfiguration(HelperController.class)
			.run((context) -> assertThat(cause(context.getStartupFailure()))
				.hasMessageStartingWith("@RateLimited on " + HelperController.class.getName() + ".helper()")
				.hasMessageContaining("the method maps no request"));
	}

	@Test
	void acceptsAnnotatedHandlers() {
		this.runner.withUserConfiguration(OrderController.class).run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void warnsOfARuleOnAPathThatSpringSecurityAnswers(CapturedOutput output) {
		this.runner.withUserConfiguration(FormLogin.class)
			.withPropertyValues("ratelimit.rules[0].path=/login", "ratelimit.rules[0].limit=5",
					"ratelimit.rules[0].window=1m", "ratelimit.rules[1].path=/**", "ratelimit.rules[1].limit=5",
					"ratelimit.rules[1].window=1m")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("ratelimit.rules[0] (/login) never applies to /login: Spring Security's "
						+ "UsernamePasswordAuthenticationFilter answers it before Spring MVC")
					.doesNotContain("ratelimit.rules[1]");
			});
	}

	@Test
	void staysQuietAboutALoginRuleDecidedBeforeSpringSecurity(CapturedOutput output) {
		this.runner.withUserConfiguration(FormLogin.class)
			.withPropertyValues("ratelimit.rules[0].path=/login", "ratelimit.rules[0].limit=5",
					"ratelimit.rules[0].window=1m", "ratelimit.rules[0].before-security=true",
					"ratelimit.rules[1].path=/logout", "ratelimit.rules[1].limit=5", "ratelimit.rules[1].window=1m")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).doesNotContain("ratelimit.rules[0]")
					.contains("ratelimit.rules[1] (/logout) never applies to /logout",
							"Set ratelimit.rules[1].before-security=true to decide it before Spring Security's filter chain.");
			});
	}

	@Test
	void staysQuietAboutLoginWithoutAFilterAnsweringIt(CapturedOutput output) {
		this.runner.withUserConfiguration(OrderController.class)
			.withPropertyValues("ratelimit.rules[0].path=/login", "ratelimit.rules[0].limit=5",
					"ratelimit.rules[0].window=1m")
			.run((context) -> assertThat(output).doesNotContain("never applies"));
	}

	private static Throwable cause(Throwable failure) {
		return NestedExceptionUtils.getMostSpecificCause(failure);
	}

	@Configuration(proxyBeanMethods = false)
	@EnableWebSecurity
	static class FormLogin {

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			return http.formLogin(Customizer.withDefaults()).build();
		}

		@Bean
		InMemoryUserDetailsManager users() {
			return new InMemoryUserDetailsManager(
					User.withUsername("alice").password("{noop}alice-password").roles("USER").build());
		}

	}

	@Controller
	static class HelperController {

		@GetMapping("/page")
		String page() {
			return "page";
		}

		@RateLimited(limit = 1, window = "1s")
		String helper() {
			return "helper";
		}

	}

	@RestController
	static class OrderController {

		@GetMapping("/orders")
		@RateLimited(limit = 1, window = "1s")
		String orders() {
			return "orders";
		}

	}

}
