package dev.ratelimit.docs.testing;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The recipe of docs/testing.md for a fresh quota in each test method: both methods get the hourly report, in
 * either order.
 */
@SpringBootTest
@AutoConfigureMockMvc
class ReportTests {

	@Autowired
	MockMvcTester mvc;

	@Test
	void getsTheReport() {
		assertThat(this.mvc.get().uri("/report")).hasStatusOk();
	}

	@Test
	void getsTheReportAgain() {
		assertThat(this.mvc.get().uri("/report")).hasStatusOk();
	}

}
