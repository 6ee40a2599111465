package dev.ratelimit.spring.test;

import java.time.Duration;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code @WebMvcTest} of a controller limited to once an hour applies its limit, on the in-memory store although
 * the application's properties (profile {@code kit-redis}) choose Redis, which a slice does not connect to, and
 * on a clock the test moves.
 */
@WebMvcTest(KitApplication.HourlyController.class)
@ManualClock
@ActiveProfiles("kit-redis")
class WebMvcSliceTests {

	@Autowired
	private MockMvcTester mvc;

	@Autowired
	private ManualTimeSource clock;

	@Autowired
	private RateLimitStore store;

	@Test
	void answers200Then429WithTheLimitsHeaders() {
		assertThat(this.mvc.get().uri("/hourly")).hasStatusOk();
		assertThat(this.mvc.get().uri("/hourly")).hasStatus(429)
			.hasHeader("Retry-After", "3600")
			.hasHeader("RateLimit-Policy", "\"HourlyController.hourly\";q=1;w=3600");
	}

	@Test
	void servesAgainOnceTheClockHasMovedAnHour() {
		assertThat(this.mvc.get().uri("/hourly")).hasStatusOk();
		this.clock.advance(Duration.ofMinutes(59));
		assertThat(this.mvc.get().uri("/hourly")).hasStatus(429).hasHeader("Retry-After", "60");
		this.clock.advance(Duration.ofMinutes(1));
		assertThat(this.mvc.get().uri("/hourly")).hasStatusOk();
	}

	@Test
	void decidesInMemoryWhateverTheApplicationsPropertiesSay() {
		assertThat(this.store).isInstanceOf(InMemoryRateLimitStore.class);
	}

}
