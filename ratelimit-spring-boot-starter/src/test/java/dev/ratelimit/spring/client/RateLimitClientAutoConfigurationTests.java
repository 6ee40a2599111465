package dev.ratelimit.spring.client;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.restclient.RestTemplateBuilder;
import org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration;
import org.springframework.boot.restclient.autoconfigure.RestTemplateAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.test.web.client.MockRestServiceServer;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.client.ExpectedCount.times;
import static org.springframework.test.web.client.match.MockRestRequestMatchers.method;
import static org.springframework.test.web.client.match.MockRestRequestMatchers.requestTo;
import static org.springframework.test.web.client.response.MockRestResponseCreators.withStatus;

class RateLimitClientAutoConfigurationTests {

	private static final String API = "http://api.example.com/items";

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitClientAutoConfiguration.class));

	@Test
	void isListedAsAutoConfiguration() {
		assertThat(ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()))
			.contains(RateLimitClientAutoConfiguration.class.getName());
	}

	@Test
	void backsOffByDefault() {
		this.contextRunner.run((context) -> assertThat(context).doesNotHaveBean(RateLimitClientInterceptor.class)
			.doesNotHaveBean(RateLimitClientCustomizer.class)
			.doesNotHaveBean(RateLimitClientProperties.class));
	}

	@Test
	void backsOffWhenDisabled() {
		this.contextRunner.withPropertyValues("ratelimit.client.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitClientInterceptor.class)
				.doesNotHaveBean(RateLimitClientCustomizer.class));
	}

	@Test
	void providesInterceptorAndCustomizerWhenEnabled() {
		this.contextRunner.withPropertyValues("ratelimit.client.enabled=true").run((context) -> {
			assertThat(context).hasSingleBean(RateLimitClientInterceptor.class)
				.hasSingleBean(RateLimitClientCustomizer.class);
			RestClient.Builder builder = RestClient.builder();
			context.getBean(RateLimitClientCustomizer.class).customize(builder);
			builder.requestInterceptors((interceptors) -> assertThat(interceptors)
				.containsExactly(context.getBean(RateLimitClientInterceptor.class)));
		});
	}

	@Test
	void bindsEveryProperty() {
		this.contextRunner
			.withPropertyValues("ratelimit.client.enabled=true", "ratelimit.client.base-delay=250ms",
					"ratelimit.client.max-delay=5s", "ratelimit.client.max-attempts=5",
					"ratelimit.client.max-total-wait=1m", "ratelimit.client.retry-non-idempotent=true",
					"ratelimit.client.pace=false")
			.run((context) -> {
				RateLimitClientProperties properties = context.getBean(RateLimitClientProperties.class);
				assertThat(properties.isEnabled()).isTrue();
				assertThat(properties.getBaseDelay()).isEqualTo(Duration.ofMillis(250));
				assertThat(properties.getMaxDelay()).isEqualTo(Duration.ofSeconds(5));
				assertThat(properties.getMaxAttempts()).isEqualTo(5);
				assertThat(properties.getMaxTotalWait()).isEqualTo(Duration.ofMinutes(1));
				assertThat(properties.isRetryNonIdempotent()).isTrue();
				assertThat(properties.isPace()).isFalse();
			});
	}

	@Test
	void hasDocumentedDefaults() {
		RateLimitClientProperties properties = new RateLimitClientProperties();
		assertThat(properties.isEnabled()).isFalse();
		assertThat(properties.getBaseDelay()).isEqualTo(Duration.ofSeconds(1));
		assertThat(properties.getMaxDelay()).isEqualTo(Duration.ofSeconds(30));
		assertThat(properties.getMaxAttempts()).isEqualTo(3);
		assertThat(properties.getMaxTotalWait()).isEqualTo(Duration.ofSeconds(30));
		assertThat(properties.isRetryNonIdempotent()).isFalse();
		assertThat(properties.isPace()).isTrue();
	}

	@Test
	void interceptorFollowsMaxAttemptsAndRetryNonIdempotent() {
		this.contextRunner
			.withPropertyValues("ratelimit.client.enabled=true", "ratelimit.client.max-attempts=4",
					"ratelimit.client.retry-non-idempotent=true")
			.run((context) -> {
				RestClient.Builder builder = RestClient.builder();
				context.getBean(RateLimitClientCustomizer.class).customize(builder);
				MockRestServiceServer server = MockRestServiceServer.bindTo(builder).build();
				server.expect(times(4), requestTo(API))
					.andExpect(method(HttpMethod.POST))
					.andRespond(withStatus(HttpStatus.TOO_MANY_REQUESTS).header("Retry-After", "0"));
				assertThat(post(builder.build())).isEqualTo(429);
				server.verify();
			});
	}

	@Test
	void interceptorFollowsMaxTotalWait() {
		this.contextRunner.withPropertyValues("ratelimit.client.enabled=true", "ratelimit.client.max-total-wait=5s")
			.run((context) -> {
				RestClient.Builder builder = RestClient.builder();
				context.getBean(RateLimitClientCustomizer.class).customize(builder);
				MockRestServiceServer server = MockRestServiceServer.bindTo(builder).build();
				server.expect(requestTo(API))
					.andRespond(withStatus(HttpStatus.TOO_MANY_REQUESTS).header("Retry-After", "6"));
				int status = builder.build()
					.get()
					.uri(API)
					.exchange((request, response) -> response.getStatusCode().value());
				assertThat(status).isEqualTo(429);
				server.verify();
			});
	}

	@Test
	void appliesToRestClientBuilderAndRestTemplateBuilderOfSpringBoot() {
		this.contextRunner
			.withConfiguration(
					AutoConfigurations.of(RestClientAutoConfiguration.class, RestTemplateAutoConfiguration.class))
			.withPropertyValues("ratelimit.client.enabled=true")
			.run((context) -> {
				RateLimitClientInterceptor interceptor = context.getBean(RateLimitClientInterceptor.class);
				context.getBean(RestClient.Builder.class)
					.requestInterceptors((interceptors) -> assertThat(interceptors).containsOnlyOnce(interceptor));
				assertThat(context.getBean(RestTemplateBuilder.class).build().getInterceptors())
					.containsOnlyOnce(interceptor);
			});
	}

	@Test
	void leavesSpringBootBuildersAloneWhenDisabled() {
		this.contextRunner
			.withConfiguration(
					AutoConfigurations.of(RestClientAutoConfiguration.class, RestTemplateAutoConfiguration.class))
			.run((context) -> {
				context.getBean(RestClient.Builder.class)
					.requestInterceptors((interceptors) -> assertThat(interceptors).isEmpty());
				assertThat(context.getBean(RestTemplateBuilder.class).build().getInterceptors()).isEmpty();
			});
	}

	@Test
	void usesInterceptorDefinedByTheApplication() {
		this.contextRunner.withPropertyValues("ratelimit.client.enabled=true")
			.withUserConfiguration(UserInterceptorConfiguration.class)
			.run((context) -> {
				assertThat(context).hasSingleBean(RateLimitClientInterceptor.class)
					.hasBean("userInterceptor")
					.hasSingleBean(RateLimitClientCustomizer.class);
				RestTemplate restTemplate = new RestTemplate();
				context.getBean(RateLimitClientCustomizer.class).customize(restTemplate);
				assertThat(restTemplate.getInterceptors())
					.containsExactly(context.getBean("userInterceptor", RateLimitClientInterceptor.class));
			});
	}

	@Test
	void usesCustomizerDefinedByTheApplication() {
		this.contextRunner.withPropertyValues("ratelimit.client.enabled=true")
			.withUserConfiguration(UserCustomizerConfiguration.class)
			.run((context) -> assertThat(context).hasSingleBean(RateLimitClientCustomizer.class)
				.hasBean("userCustomizer"));
	}

	@Test
	void providesNoCustomizerWithoutRestClient() {
		this.contextRunner.withPropertyValues("ratelimit.client.enabled=true")
			.withClassLoader(new FilteredClassLoader(RestClient.class))
			.run((context) -> assertThat(context).hasSingleBean(RateLimitClientInterceptor.class)
				.doesNotHaveBean(RateLimitClientCustomizer.class));
	}

	@Test
	void providesNoCustomizerWithoutSpringBootRestClient() {
		this.contextRunner.withPropertyValues("ratelimit.client.enabled=true")
			.withClassLoader(new FilteredClassLoader(RestClientCustomizer.class))
			.run((context) -> assertThat(context).hasSingleBean(RateLimitClientInterceptor.class)
				.doesNotHaveBean(RateLimitClientCustomizer.class));
	}

	@Test
	void backsOffWithoutSpringWeb() {
		this.contextRunner.withPropertyValues("ratelimit.client.enabled=true")
			.withClassLoader(new FilteredClassLoader(ClientHttpRequestInterceptor.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(RateLimitClientInterceptor.class)
				.doesNotHaveBean(RateLimitClientCustomizer.class));
	}

	@Test
	void failsNamingThePropertyWhenMaxAttemptsIsBelowOne() {
		assertFailsFor("ratelimit.client.max-attempts", "ratelimit.client.max-attempts=0");
	}

	@Test
	void failsNamingThePropertyWhenADelayIsNotPositive() {
		assertFailsFor("ratelimit.client.base-delay", "ratelimit.client.base-delay=0s");
		assertFailsFor("ratelimit.client.max-delay", "ratelimit.client.max-delay=-1s");
		assertFailsFor("ratelimit.client.max-total-wait", "ratelimit.client.max-total-wait=-1s");
	}

	@Test
	void failsNamingThePropertyWhenBaseDelayExceedsMaxDelay() {
		assertFailsFor("ratelimit.client.base-delay", "ratelimit.client.base-delay=10s",
				"ratelimit.client.max-delay=5s");
	}

	@Test
	void customizesEachBuilderAndTemplateOnlyOnce() {
		RateLimitClientInterceptor interceptor = RateLimitClientInterceptor.builder().build();
		RateLimitClientCustomizer customizer = new RateLimitClientCustomizer(interceptor);
		RestClient.Builder builder = RestClient.builder();
		customizer.customize(builder);
		customizer.customize(builder);
		builder.requestInterceptors((interceptors) -> assertThat(interceptors).containsExactly(interceptor));
		RestTemplate restTemplate = new RestTemplate();
		customizer.customize(restTemplate);
		customizer.customize(restTemplate);
		assertThat(restTemplate.getInterceptors()).containsExactly(interceptor);
	}

	private void assertFailsFor(String property, String... values) {
		this.contextRunner.withPropertyValues("ratelimit.client.enabled=true")
			.withPropertyValues(values)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOfSatisfying(InvalidConfigurationPropertyValueException.class,
						(ex) -> assertThat(ex.getName()).isEqualTo(property)));
	}

	private static int post(RestClient client) {
		return client.post().uri(API).body("x").exchange((request, response) -> response.getStatusCode().value());
	}

	@Configuration(proxyBeanMethods = false)
	static class UserInterceptorConfiguration {

		@Bean
		RateLimitClientInterceptor userInterceptor() {
			return RateLimitClientInterceptor.builder().maxAttempts(5).build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserCustomizerConfiguration {

		@Bean
		RateLimitClientCustomizer userCustomizer() {
			return new RateLimitClientCustomizer(RateLimitClientInterceptor.builder().build());
		}

	}

}
