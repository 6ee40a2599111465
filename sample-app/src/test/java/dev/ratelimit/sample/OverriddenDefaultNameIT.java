package dev.ratelimit.sample;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.client.RestTestClient;

/**
 * Runs the sample with the limit of a default-named policy lowered on the command line, written as a user
 * would write it: no brackets around the dotted name.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, args = "--ratelimit.policies.DemoController.gcra.limit=1")
@AutoConfigureRestTestClient
@Import(ManualClock.class)
class OverriddenDefaultNameIT {

	@Autowired
	private RestTestClient client;

	@Test
	void refusesTheSecondRequestOnceTheLimitIsOne() {
		this.client.get()
			.uri("/demo/gcra")
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("RateLimit-Policy", "\"DemoController.gcra\";q=1;w=10");
		this.client.get().uri("/demo/gcra").exchange().expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
	}

}
