package dev.ratelimit.docs.testing;

import java.time.Duration;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.spring.test.ManualClock;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The recipe of the README and docs/testing.md for moving time: the hour passes without a sleep.
 */
@WebMvcTest(ReportController.class)
@ManualClock
class ReportControllerTests {

	@Autowired
	MockMvcTester mvc;

	@Autowired
	ManualTimeSource clock;

	@Test
	void servesAgainAnHourLater() {
		assertThat(this.mvc.get().uri("/report")).hasStatusOk();
		assertThat(this.mvc.get().uri("/report")).hasStatus(429);
		this.clock.advance(Duration.ofHours(1));
		assertThat(this.mvc.get().uri("/report")).hasStatusOk();
	}

}
