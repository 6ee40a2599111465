package dev.ratelimit.docs.testing;

import dev.ratelimit.spring.test.KeepQuotas;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The recipe of docs/testing.md for {@code @KeepQuotas}: the second method finds the hourly call used by the
 * first.
 */
@SpringBootTest
@AutoConfigureMockMvc
@KeepQuotas
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HourlyQuotaTests {

	@Autowired
	MockMvcTester mvc;

	@Test
	@Order(1)
	void usesTheHourlyCall() {
		assertThat(this.mvc.get().uri("/report")).hasStatusOk();
	}

	@Test
	@Order(2)
	void findsItUsed() {
		assertThat(this.mvc.get().uri("/report")).hasStatus(429);
	}

}
