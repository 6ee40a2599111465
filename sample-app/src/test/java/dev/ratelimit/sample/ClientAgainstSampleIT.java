package dev.ratelimit.sample;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.spring.client.RateLimitClientInterceptor;
import dev.ratelimit.spring.test.ManualClock;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpRequest;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client with {@link RateLimitClientInterceptor} calling the sample's limited endpoint in a loop: the server and
 * the client share one clock, which the client's waits move, so nothing sleeps and every wait is exact.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@ManualClock
class ClientAgainstSampleIT {

	private static final int CALLS = 40;

	private static final int MAX_ATTEMPTS = 3;

	@LocalServerPort
	private int port;

	@Autowired
	private ManualTimeSource time;

	private final List<Attempt> attempts = new ArrayList<>();

	@Test
	void getsEveryRequestThroughWithoutRetryingEarlyOrTooOften() {
		RestClient client = client(false);
		for (int call = 0; call < CALLS; call++) {
			int before = this.attempts.size();
			ResponseEntity<String> response = client.get().uri("/demo/gcra").retrieve().toEntity(String.class);
			assertThat(response.getStatusCode().value()).as("call %d", call).isEqualTo(200);
			assertThat(this.attempts.size() - before).as("requests sent for call %d", call)
				.isBetween(1, MAX_ATTEMPTS);
		}
		List<Attempt> refused = this.attempts.stream().filter((attempt) -> attempt.status == 429).toList();
		assertThat(refused).as("the loop outpaces the limit, so the server refuses some requests").isNotEmpty();
		for (int i = 0; i < this.attempts.size() - 1; i++) {
			Attempt attempt = this.attempts.get(i);
			if (attempt.status == 429) {
				long waited = this.attempts.get(i + 1).nanos - attempt.nanos;
				assertThat(waited).as("wait after the 429 of request %d", i)
					.isGreaterThanOrEqualTo(Duration.ofSeconds(Long.parseLong(attempt.retryAfter)).toNanos());
			}
		}
	}

	@Test
	void pacingSpendsNoRequestOnACertain429() {
		RestClient client = client(true);
		for (int call = 0; call < CALLS; call++) {
			assertThat(client.get().uri("/demo/gcra").retrieve().toEntity(String.class).getStatusCode().value())
				.isEqualTo(200);
		}
		assertThat(this.attempts).hasSize(CALLS).allSatisfy((attempt) -> assertThat(attempt.status).isEqualTo(200));
	}

	private RestClient client(boolean pace) {
		RateLimitClientInterceptor interceptor = RateLimitClientInterceptor.builder()
			.maxAttempts(MAX_ATTEMPTS)
			.maxTotalWait(Duration.ofSeconds(30))
			.pace(pace)
			.clock(new SharedClock(this.time))
			.sleeper(this.time::advance)
			.random(new Random(7))
			.build();
		return RestClient.builder()
			.baseUrl("http://127.0.0.1:" + this.port)
			.requestInterceptor(interceptor)
			.requestInterceptor(this::record)
			.build();
	}

	/** Sits behind the rate limit interceptor, so it sees every request actually sent. */
	private ClientHttpResponse record(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
			throws IOException {
		ClientHttpResponse response = execution.execute(request, body);
		this.attempts.add(new Attempt(this.time.nanoTime(), response.getStatusCode().value(),
				response.getHeaders().getFirst("Retry-After")));
		return response;
	}

	private record Attempt(long nanos, int status, String retryAfter) {
	}

	/** The server's manual time as a wall clock, for the client's HTTP dates. */
	private static final class SharedClock extends Clock {

		private final ManualTimeSource time;

		SharedClock(ManualTimeSource time) {
			this.time = time;
		}

		@Override
		public ZoneId getZone() {
			return ZoneOffset.UTC;
		}

		@Override
		public Clock withZone(ZoneId zone) {
			return this;
		}

		@Override
		public Instant instant() {
			return Instant.EPOCH.plusNanos(this.time.nanoTime());
		}

	}

}
