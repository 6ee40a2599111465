package dev.ratelimit.docs.testing;

import java.time.Duration;

import dev.ratelimit.core.ManualTimeSource;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The recipe of docs/testing.md for a test that declares its clock itself: the limiters read it as they read
 * {@code @ManualClock}'s.
 */
@WebMvcTest(ReportController.class)
class ReportClockTests {

	@Autowired
	MockMvcTester mvc;

	@Autowired
	ManualTimeSource clock;

	@Test
	void decidesOnTheClockTheTestDeclares() {
		assertThat(this.clock.nanoTime()).isEqualTo(Duration.ofDays(1).toNanos());
		assertThat(this.mvc.get().uri("/report")).hasStatusOk();
		assertThat(this.mvc.get().uri("/report")).hasStatus(429);
		this.clock.advance(Duration.ofHours(1));
		assertThat(this.mvc.get().uri("/report")).hasStatusOk();
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class ManualClockConfiguration {

		@Bean
		ManualTimeSource timeSource() {
			return new ManualTimeSource(Duration.ofDays(1).toNanos());
		}

	}

}
