package dev.ratelimit.docs.testing;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The recipe of docs/testing.md for the headers and the problem body of a 429.
 */
@SpringBootTest
@AutoConfigureMockMvc
class ReportHeadersTests {

	@Autowired
	MockMvcTester mvc;

	@Test
	void rejectsTheSecondCallOfTheHour() {
		assertThat(this.mvc.get().uri("/report")).hasStatusOk()
			.hasHeader("RateLimit", "\"ReportController.report\";r=0;t=3600");
		assertThat(this.mvc.get().uri("/report")).hasStatus(HttpStatus.TOO_MANY_REQUESTS)
			.hasHeader("Retry-After", "3600")
			.hasHeader("RateLimit-Policy", "\"ReportController.report\";q=1;w=3600")
			.bodyJson()
			.extractingPath("$.policies")
			.asArray()
			.containsExactly("ReportController.report");
	}

}
