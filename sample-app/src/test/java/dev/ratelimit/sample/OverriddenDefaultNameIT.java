package dev.ratelimit.sample;

import dev.ratelimit.spring.test.ManualClock;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.client.RestTestClient;

/**
 * Runs the sample with the limit of a default-named policy lowered on the command line, written as a user
 * would write it: no brackets around the dotted name.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, args = "--ratelimit.policies.DemoController.gcra.limit=1")
@ManualClock
class OverriddenDefaultNameIT {

	@LocalServerPort
	private int port;

	@Test
	void refusesTheSecondRequestOnceTheLimitIsOne() {
		// bound to the running server, whichever web stack serves it
		RestTestClient client = SampleClient.on(this.port);
		client.get()
			.uri("/demo/gcra")
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("RateLimit-Policy", "\"DemoController.gcra\";q=1;w=10");
		client.get().uri("/demo/gcra").exchange().expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
	}

}
