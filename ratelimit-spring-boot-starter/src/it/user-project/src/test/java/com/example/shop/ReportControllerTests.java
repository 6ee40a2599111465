package com.example.shop;

import java.time.Duration;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.spring.test.ManualClock;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;

/** The controller alone, in a slice: its limit applies, on a clock the test moves. */
@WebMvcTest(ReportController.class)
@ManualClock
class ReportControllerTests {

	@Autowired
	private MockMvcTester mvc;

	@Autowired
	private ManualTimeSource clock;

	@Test
	void answers200Then429() {
		assertThat(this.mvc.get().uri("/report")).hasStatusOk();
		assertThat(this.mvc.get().uri("/report")).hasStatus(429).hasHeader("Retry-After", "3600");
	}

	@Test
	void servesAgainAnHourLater() {
		assertThat(this.mvc.get().uri("/report")).hasStatusOk();
		this.clock.advance(Duration.ofHours(1));
		assertThat(this.mvc.get().uri("/report")).hasStatusOk();
	}

}
