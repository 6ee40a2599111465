package dev.ratelimit.docs.testing;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The recipe of docs/testing.md for a slice: {@code @WebMvcTest} applies the controller's limit.
 */
@WebMvcTest(ReportController.class)
class ReportSliceTests {

	@Autowired
	MockMvcTester mvc;

	@Test
	void answers200Then429() {
		assertThat(this.mvc.get().uri("/report")).hasStatusOk();
		assertThat(this.mvc.get().uri("/report")).hasStatus(429);
	}

}
