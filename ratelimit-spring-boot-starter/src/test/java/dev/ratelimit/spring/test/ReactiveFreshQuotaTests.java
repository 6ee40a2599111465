package dev.ratelimit.spring.test;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Test methods of a whole WebFlux application on {@code WebTestClient}, each calling an endpoint limited to once
 * an hour: each starts with a full quota.
 */
@SpringBootTest(properties = "spring.main.web-application-type=reactive")
@AutoConfigureWebTestClient
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ReactiveFreshQuotaTests {

	@Autowired
	private WebTestClient client;

	@Test
	@Order(1)
	void callsTheHourlyEndpointOnce() {
		this.client.get().uri("/hourly").exchange().expectStatus().isOk();
	}

	@Test
	@Order(2)
	void callsTheHourlyEndpointOnceAgain() {
		this.client.get().uri("/hourly").exchange().expectStatus().isOk();
		this.client.get().uri("/hourly").exchange().expectStatus().isEqualTo(429);
	}

}
