package dev.ratelimit.spring.test;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webflux.test.autoconfigure.WebFluxTest;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * A {@code @WebFluxTest} of a controller limited to once an hour applies its limit, each method on a full quota.
 */
@WebFluxTest(KitApplication.HourlyController.class)
class WebFluxSliceTests {

	@Autowired
	private WebTestClient client;

	@Test
	void answers200Then429WithTheLimitsHeaders() {
		this.client.get().uri("/hourly").exchange().expectStatus().isOk();
		this.client.get()
			.uri("/hourly")
			.exchange()
			.expectStatus()
			.isEqualTo(429)
			.expectHeader()
			.valueEquals("Retry-After", "3600")
			.expectHeader()
			.valueEquals("RateLimit-Policy", "\"HourlyController.hourly\";q=1;w=3600");
	}

	@Test
	void startsWithAFullQuotaAgain() {
		this.client.get().uri("/hourly").exchange().expectStatus().isOk();
	}

}
