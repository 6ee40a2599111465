package dev.ratelimit.sample;

import java.net.http.HttpResponse;
import java.util.List;

import dev.ratelimit.core.testing.ManualScheduler;
import dev.ratelimit.spring.test.ManualClock;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the sample application on a real server with {@code ratelimit.shadow=true}: every limit is decided and
 * counted, and none rejects or holds a request or changes its response.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "ratelimit.shadow=true")
@ManualClock
@Import(ManualRelease.class)
abstract class AbstractShadowSampleIT {

	@Autowired
	private ManualScheduler scheduler;

	@Autowired
	private MeterRegistry registry;

	@LocalServerPort
	private int port;

	@Test
	void answersEveryRequestOverTheLimitAsIfThereWereNoneAndCountsWhatItWouldHaveRejected() {
		LoopbackClient client = new LoopbackClient("127.0.0.2", this.port);
		Decisions.assertShadowedGcra(this.registry, client);
	}

	@Test
	void holdsNoRequestThatALeakyBucketWouldDelayAndCountsIt() throws Exception {
		long delayed = Decisions.count(this.registry, "shaping-yaml", "shadow_delayed");
		long rejected = Decisions.count(this.registry, "shaping-yaml", "shadow_rejected");
		SimultaneousRequests requests = new SimultaneousRequests(this.port, this.scheduler);
		List<HttpResponse<String>> answered = requests.send("/demo/shaping/yaml", 10);
		// delay=2 of burst=5: 3 would pass at once, 3 wait for their slot and 4 be rejected; all pass at once
		assertThat(answered).hasSize(10).allSatisfy((response) -> {
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.body()).isEqualTo("yaml\n");
		});
		assertThat(this.scheduler.pending()).isZero();
		assertThat(Decisions.count(this.registry, "shaping-yaml", "shadow_delayed") - delayed).isEqualTo(3);
		assertThat(Decisions.count(this.registry, "shaping-yaml", "shadow_rejected") - rejected).isEqualTo(4);
	}

}
