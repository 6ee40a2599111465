package dev.ratelimit.spring.test;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Test methods of an application on MockMvc, each calling an endpoint limited to once an hour: each starts with a
 * full quota, unless it or its class keeps the quotas.
 */
@SpringBootTest
@AutoConfigureMockMvc
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FreshQuotaTests {

	@Autowired
	private MockMvcTester mvc;

	@Test
	@Order(1)
	void callsTheHourlyEndpointOnce() {
		assertThat(this.mvc.get().uri("/hourly")).hasStatusOk().hasBodyTextEqualTo("served");
	}

	@Test
	@Order(2)
	void callsTheHourlyEndpointOnceAgain() {
		assertThat(this.mvc.get().uri("/hourly")).hasStatusOk();
	}

	@Test
	@Order(3)
	@KeepQuotas
	void findsTheQuotaTheMethodBeforeUsedWhenItKeepsTheQuotas() {
		assertThat(this.mvc.get().uri("/hourly")).hasStatus(429);
	}

	@Test
	@Order(4)
	void rejectsASecondCallWithinOneMethodWithItsHeadersAndBody() {
		assertThat(this.mvc.get().uri("/hourly")).hasStatusOk()
			.hasHeader("RateLimit", "\"HourlyController.hourly\";r=0;t=3600");
		assertThat(this.mvc.get().uri("/hourly")).hasStatus(HttpStatus.TOO_MANY_REQUESTS)
			.hasHeader("Retry-After", "3600")
			.hasHeader("RateLimit-Policy", "\"HourlyController.hourly\";q=1;w=3600")
			.bodyJson()
			.extractingPath("$.policies")
			.asArray()
			.containsExactly("HourlyController.hourly");
	}

	/** Methods that share their quotas, in the same application context as the methods above. */
	@Nested
	@KeepQuotas
	@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
	class KeptQuotas {

		@Test
		@Order(1)
		void startsWithAFullQuotaWhateverTheMethodsBeforeTheClassUsed() {
			assertThat(FreshQuotaTests.this.mvc.get().uri("/hourly")).hasStatusOk();
		}

		@Test
		@Order(2)
		void findsWhatTheMethodBeforeItUsed() {
			assertThat(FreshQuotaTests.this.mvc.get().uri("/hourly")).hasStatus(429);
		}

	}

}
