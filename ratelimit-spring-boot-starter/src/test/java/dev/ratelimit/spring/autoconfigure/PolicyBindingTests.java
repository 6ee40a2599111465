package dev.ratelimit.spring.autoconfigure;

import java.util.HashMap;
import java.util.Map;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.web.internal.LimitSettings;
import dev.ratelimit.spring.web.internal.PolicyOverride;
import dev.ratelimit.spring.webmvc.RateLimitWebMvcAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.ApplicationContextFactory;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.web.context.servlet.AnnotationConfigServletWebApplicationContext;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.mock.web.MockServletContext;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.WebApplicationContext;
import org.springframework.web.context.support.StandardServletEnvironment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;

/**
 * Tests that every way Spring Boot reads a property overrides the default-named policy
 * {@code DemoController.gcra}, declared at 10 per 10 seconds, in a real application started by
 * {@link SpringApplication}: a second request within the window is refused only if the override applied.
 */
class PolicyBindingTests {

	@ParameterizedTest
	@ValueSource(strings = { "nested.yml", "dotted.yml", "brackets.yml", "dotted.properties",
			"brackets.properties" })
	void overridesFromAConfigurationFile(String file) throws Exception {
		assertLimitedToOne(Map.of(), "--spring.config.location=classpath:policy-binding/" + file);
	}

	@ParameterizedTest
	@ValueSource(strings = { "--ratelimit.policies.DemoController.gcra.limit=1",
			"--ratelimit.policies.democontroller.gcra.limit=1", "--ratelimit.policies[DemoController.gcra].limit=1",
			"--ratelimit.policies.demo-controller.gcra.limit=1" })
	void overridesFromTheCommandLine(String argument) throws Exception {
		assertLimitedToOne(Map.of(), argument);
	}

	@ParameterizedTest
	@ValueSource(strings = { "RATELIMIT_POLICIES_DEMOCONTROLLER_GCRA_LIMIT",
			"ratelimit_policies_democontroller_gcra_limit", "RATELIMIT_POLICIES_DEMO_CONTROLLER_GCRA_LIMIT" })
	void overridesFromAnEnvironmentVariable(String variable) throws Exception {
		assertLimitedToOne(Map.of(variable, "1"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "{\"ratelimit\":{\"policies\":{\"DemoController.gcra\":{\"limit\":1}}}}",
			"{\"ratelimit\":{\"policies\":{\"DemoController\":{\"gcra\":{\"limit\":1}}}}}",
			"{\"ratelimit.policies.DemoController.gcra.limit\":1}" })
	void overridesFromSpringApplicationJson(String json) throws Exception {
		assertLimitedToOne(Map.of("SPRING_APPLICATION_JSON", json));
	}

	@Test
	void takesEachFieldFromTheSourceOfHighestPrecedenceWhateverItsSpelling() throws Exception {
		// the file sets limit 5 and window 1m; the variable, of higher precedence, sets limit 1 only
		try (Started app = start(Map.of("RATELIMIT_POLICIES_DEMOCONTROLLER_GCRA_LIMIT", "1"),
				"--spring.config.location=classpath:policy-binding/five.yml")) {
			app.mvc.perform(get("/gcra")).andExpect((result) -> assertThat(result.getResponse().getStatus())
				.isEqualTo(200));
			app.mvc.perform(get("/gcra"))
				.andExpect((result) -> assertThat(result.getResponse().getHeader("RateLimit-Policy"))
					.isEqualTo("\"DemoController.gcra\";q=1;w=60"));
		}
	}

	@Test
	void overridesAFieldWhoseNameAnEnvironmentVariableSplits() throws Exception {
		try (Started app = start(Map.of("RATELIMIT_POLICIES_DEMOCONTROLLER_SHAPED_DELAY_AFTER", "1"))) {
			PolicyOverride shaped = app.context.getBean(LimitSettings.class).override("DemoController.shaped");
			assertThat(shaped).isNotNull();
			assertThat(shaped.values().delayAfter()).isEqualTo(1);
		}
	}

	private static void assertLimitedToOne(Map<String, String> environment, String... args) throws Exception {
		try (Started app = start(environment, args)) {
			app.mvc.perform(get("/gcra")).andExpect((result) -> assertThat(result.getResponse().getStatus())
				.isEqualTo(200));
			app.mvc.perform(get("/gcra")).andExpect((result) -> assertThat(result.getResponse().getStatus())
				.isEqualTo(429));
		}
	}

	/**
	 * Starts the application with the given environment variables in place of the process's, read through
	 * Spring Boot's own mapping of a source named {@code systemEnvironment}.
	 */
	private static Started start(Map<String, String> variables, String... args) {
		SpringApplication application = new SpringApplication(App.class);
		application.setWebApplicationType(WebApplicationType.SERVLET);
		application.setBannerMode(Banner.Mode.OFF);
		application.setLogStartupInfo(false);
		application.setApplicationContextFactory(ApplicationContextFactory.of(() -> {
			AnnotationConfigServletWebApplicationContext context = new AnnotationConfigServletWebApplicationContext();
			context.setServletContext(new MockServletContext());
			return context;
		}));
		StandardServletEnvironment environment = new StandardServletEnvironment();
		environment.getPropertySources()
			.replace(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
					new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
							new HashMap<>(variables)));
		application.setEnvironment(environment);
		ConfigurableApplicationContext context = application.run(args);
		MockMvc mvc = MockMvcBuilders.webAppContextSetup((WebApplicationContext) context).build();
		return new Started(context, mvc);
	}

	private record Started(ConfigurableApplicationContext context, MockMvc mvc) implements AutoCloseable {

		@Override
		public void close() {
			this.context.close();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ RateLimitAutoConfiguration.class, RateLimitWebMvcAutoConfiguration.class,
			WebMvcAutoConfiguration.class })
	@Import(DemoController.class)
	static class App {

	}

	@RestController
	static class DemoController {

		@GetMapping("/gcra")
		@RateLimited(limit = 10, window = "10s", algorithm = Algorithm.GCRA)
		String gcra() {
			return "gcra";
		}

		@GetMapping("/shaped")
		@RateLimited(limit = 2, window = "1s", burst = 5, algorithm = Algorithm.LEAKY_BUCKET)
		String shaped() {
			return "shaped";
		}

	}

}
