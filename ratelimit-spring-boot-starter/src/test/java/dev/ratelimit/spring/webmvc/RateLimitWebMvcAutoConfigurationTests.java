package dev.ratelimit.spring.webmvc;

import java.time.Duration;

import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;
import dev.ratelimit.spring.RateLimitExceededHandler;
import dev.ratelimit.spring.RateLimiters;
import dev.ratelimit.spring.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.spring.observability.internal.MicrometerRateLimitMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests of the conditions of the Spring MVC auto-configuration: which of its beans exist, and when.
 */
class RateLimitWebMvcAutoConfigurationTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitWebMvcAutoConfiguration.class, WebMvcAutoConfiguration.class));

	@Test
	void configuresInMemoryStoreAndInterceptorByDefault() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(InMemoryRateLimitStore.class)
			.hasSingleBean(TimeSource.class)
			.hasSingleBean(RateLimitInterceptor.class)
			.hasSingleBean(RateLimitWebMvcConfigurer.class)
			.hasSingleBean(RateLimitExceededHandler.class)
			.hasSingleBean(MicrometerRateLimitMetrics.class));
	}

	@Test
	void limitsNoRequestWhenDisabledButKeepsTheLimitersOfCode() {
		this.runner.withPropertyValues("ratelimit.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitInterceptor.class)
				.doesNotHaveBean(RateLimitWebMvcConfigurer.class)
				.hasSingleBean(RateLimitStore.class)
				.hasSingleBean(RateLimiters.class));
	}

	@Test
	void keepsTheStoreButNoInterceptorOutsideServletWebApplications() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitWebMvcAutoConfiguration.class))
			.run((context) -> assertThat(context).hasSingleBean(RateLimitStore.class)
				.doesNotHaveBean(RateLimitInterceptor.class));
	}

	@Test
	void worksWithoutMicrometer() {
		this.runner.withClassLoader(new FilteredClassLoader("io.micrometer"))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(RateLimitInterceptor.class)
				.doesNotHaveBean(MicrometerRateLimitMetrics.class));
	}

	@Test
	void publishesTheNumberOfHeldRequestsAsAGauge() {
		this.runner.run((context) -> {
			MeterRegistry registry = new SimpleMeterRegistry();
			context.getBeansOfType(MeterBinder.class).values().forEach((binder) -> binder.bindTo(registry));
			MockHttpServletRequest request = new MockHttpServletRequest("GET", "/queued");
			request.setAsyncSupported(true);
			context.getBean(HeldRequests.class)
				.hold(request, new MockHttpServletResponse(), Duration.ofMinutes(10).toNanos());
			assertThat(registry.get("ratelimit.requests.held").gauge().value()).isOne();
			request.getAsyncContext().complete();
			assertThat(registry.get("ratelimit.requests.held").gauge().value()).isZero();
		});
	}

}
