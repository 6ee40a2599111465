package dev.ratelimit.spring.webflux;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.testing.BlockingCallsFail;
import dev.ratelimit.core.testing.ManualScheduler;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.TestApplication;
import dev.ratelimit.spring.autoconfigure.RateLimitAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests that a WebFlux application shapes traffic as nginx {@code limit_req} does, holding a queued request
 * until its slot without a thread: the limiter and the shaping scheduler share a manual clock, so a request is
 * released when the test moves the clock to its slot, never by the passing of real time.
 */
@ExtendWith(BlockingCallsFail.class)
class WebFluxShapingIT {

	private final ManualTimeSource time = new ManualTimeSource();

	private final ManualScheduler scheduler = new ManualScheduler(this.time);

	private final HttpClient http = HttpClient.newHttpClient();

	private final BlockingQueue<HttpResponse<String>> responses = new LinkedBlockingQueue<>();

	@Test
	void holdsQueuedRequestsUntilTheirSlotsAndReleasesThemInTheOrderTheyCame() throws Exception {
		SpringApplication application = new SpringApplication(App.class);
		application.setWebApplicationType(WebApplicationType.REACTIVE);
		application.addInitializers((context) -> {
			context.getBeanFactory().registerSingleton("timeSource", this.time);
			context.getBeanFactory()
				.registerSingleton(RateLimitAutoConfiguration.SHAPING_SCHEDULER_BEAN_NAME, this.scheduler);
		});
		try (ConfigurableApplicationContext context = application.run("--server.port=0",
				"--server.address=127.0.0.1")) {
			int port = ((WebServerApplicationContext) context).getWebServer().getPort();
			HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/queued")).build();
			for (int i = 0; i < 10; i++) {
				this.http.sendAsync(request, HttpResponse.BodyHandlers.ofString()).thenAccept(this.responses::add);
			}
			List<HttpResponse<String>> atOnce = new ArrayList<>();
			for (int i = 0; i < 5; i++) {
				atOnce.add(next());
			}
			assertThat(this.scheduler.awaitPending(5, Duration.ofSeconds(10))).isTrue();
			assertThat(atOnce).extracting(HttpResponse::statusCode).containsExactlyInAnyOrder(200, 429, 429, 429, 429);
			assertThat(atOnce).filteredOn((response) -> response.statusCode() == 429)
				.allSatisfy((response) -> assertThat(response.headers().firstValue("Retry-After")).hasValue("1"));
			assertThat(this.responses).isEmpty();
			assertThat(context.getBean(ExchangeDecisions.class).held()).isEqualTo(5);
			assertThat(this.scheduler.pendingDelays()).containsExactly(Duration.ofMillis(500), Duration.ofMillis(1000),
					Duration.ofMillis(1500), Duration.ofMillis(2000), Duration.ofMillis(2500));
			// each is released at its slot, in the order it was admitted: r counts down the places it took
			String[] headers = { "r=4;t=1", "r=3;t=2", "r=2;t=2", "r=1;t=3", "r=0;t=3" };
			for (String header : headers) {
				assertThat(this.scheduler.runNext()).isOne();
				HttpResponse<String> released = next();
				assertThat(released.statusCode()).isEqualTo(200);
				assertThat(released.body()).isEqualTo("queued");
				assertThat(released.headers().firstValue("RateLimit")).hasValue("\"queued\";" + header);
			}
			assertThat(context.getBean(ExchangeDecisions.class).held()).isZero();
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			assertThat(count(registry, "allowed")).isEqualTo(1);
			assertThat(count(registry, "delayed")).isEqualTo(5);
			assertThat(count(registry, "rejected")).isEqualTo(4);
		}
	}

	private HttpResponse<String> next() throws InterruptedException {
		HttpResponse<String> response = this.responses.poll(10, TimeUnit.SECONDS);
		assertThat(response).as("a response within 10 s").isNotNull();
		return response;
	}

	private static double count(MeterRegistry registry, String outcome) {
		return registry.get("ratelimit.decisions").tags("policy", "queued", "outcome", outcome).counter().count();
	}

	@TestApplication
	@Import(QueuedController.class)
	static class App {

	}

	@RestController
	static class QueuedController {

		/** nginx {@code limit_req zone=queued burst=5;} with {@code rate=2r/s}. */
		@GetMapping("/queued")
		@RateLimited(limit = 2, window = "1s", burst = 5, algorithm = Algorithm.LEAKY_BUCKET, name = "queued")
		Mono<String> queued() {
			return Mono.just("queued");
		}

	}

}
