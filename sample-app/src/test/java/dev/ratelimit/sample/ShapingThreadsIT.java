package dev.ratelimit.sample;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

import dev.ratelimit.core.testing.ManualScheduler;
import dev.ratelimit.spring.test.ManualClock;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests that requests held for their slot take no servlet container thread: with 8 threads, 100 requests wait
 * in a queue while another endpoint keeps answering.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "server.tomcat.threads.max=8", "server.tomcat.threads.min-spare=2",
				"ratelimit.policies.[ShapingController.burst].burst=100" })
@AutoConfigureRestTestClient
@ManualClock
@Import(ManualRelease.class)
class ShapingThreadsIT {

	@Autowired
	private RestTestClient client;

	@Autowired
	private ManualScheduler scheduler;

	@LocalServerPort
	private int port;

	@Test
	void answersOtherEndpointsWhileAHundredRequestsWaitForTheirSlots() throws Exception {
		SimultaneousRequests requests = new SimultaneousRequests(this.port, this.scheduler);
		List<HttpResponse<String>> atOnce = requests.send("/demo/shaping/burst", 101);
		assertThat(atOnce).singleElement().satisfies((response) -> assertThat(response.statusCode()).isEqualTo(200));
		assertThat(this.scheduler.pending()).isEqualTo(100);
		for (int i = 0; i < 5; i++) {
			this.client.get().uri("/demo/gcra").exchange().expectStatus().isOk();
		}
		// the other endpoint answered while all 100 were still held
		assertThat(this.scheduler.pending()).isEqualTo(100);
		assertThat(requests.noneAnswered()).isTrue();
		this.scheduler.advance(Duration.ofSeconds(50));
		for (int i = 0; i < 100; i++) {
			assertThat(requests.next().statusCode()).isEqualTo(200);
		}
	}

}
