package dev.ratelimit.spring.client;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.http.HttpMethod;
import org.springframework.http.HttpRequest;
import org.springframework.http.HttpStatus;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.mock.http.client.MockClientHttpRequest;
import org.springframework.mock.http.client.MockClientHttpResponse;
import org.springframework.test.web.client.MockRestServiceServer;
import org.springframework.test.web.client.ResponseActions;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.springframework.test.web.client.ExpectedCount.times;
import static org.springframework.test.web.client.match.MockRestRequestMatchers.content;
import static org.springframework.test.web.client.match.MockRestRequestMatchers.method;
import static org.springframework.test.web.client.match.MockRestRequestMatchers.requestTo;
import static org.springframework.test.web.client.response.MockRestResponseCreators.withStatus;
import static org.springframework.test.web.client.response.MockRestResponseCreators.withSuccess;

class RateLimitClientInterceptorTests {

	private static final String API = "http://api.example.com/items";

	private static final HttpStatus TOO_MANY_REQUESTS = HttpStatus.TOO_MANY_REQUESTS;

	private final MutableClock clock = new MutableClock(Instant.parse("2025-01-01T00:00:00Z"));

	private final RecordingSleeper sleeper = new RecordingSleeper(this.clock);

	private MockRestServiceServer server;

	@Test
	void waitsRetryAfterSecondsThenRetries() {
		RestClient client = client(RateLimitClientInterceptor.builder());
		expect(API).andRespond(withStatus(TOO_MANY_REQUESTS).header("Retry-After", "3"));
		expect(API).andRespond(withSuccess());
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(200);
		this.server.verify();
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(3));
	}

	@Test
	void waitsUntilRetryAfterHttpDateOnTheClock() {
		RestClient client = client(RateLimitClientInterceptor.builder());
		expect(API).andRespond(withStatus(TOO_MANY_REQUESTS).header("Retry-After", "Wed, 01 Jan 2025 00:00:05 GMT"));
		expect(API).andRespond(withSuccess());
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(200);
		this.server.verify();
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(5));
	}

	@Test
	void retriesAtOnceWhenRetryAfterIsZeroOrInThePast() {
		RestClient client = client(RateLimitClientInterceptor.builder());
		expect(API).andRespond(withStatus(TOO_MANY_REQUESTS).header("Retry-After", "0"));
		expect(API).andRespond(withStatus(TOO_MANY_REQUESTS).header("Retry-After", "Tue, 31 Dec 2024 23:59:59 GMT"));
		expect(API).andRespond(withSuccess());
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(200);
		this.server.verify();
		assertThat(this.sleeper.sleeps()).isEmpty();
	}

	@Test
	void backsOffWithFullJitterWhenRetryAfterIsAbsent() {
		RestClient client = client(RateLimitClientInterceptor.builder()
			.baseDelay(Duration.ofMillis(100))
			.maxDelay(Duration.ofSeconds(1))
			.maxAttempts(6)
			.random(new SplittableRandom(42)));
		this.server.expect(times(5), requestTo(API)).andRespond(withStatus(TOO_MANY_REQUESTS));
		expect(API).andRespond(withSuccess());
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(200);
		this.server.verify();
		List<Long> ceilings = millisToNanos(100, 200, 400, 800, 1000);
		SplittableRandom expected = new SplittableRandom(42);
		assertThat(this.sleeper.sleeps()).extracting(Duration::toNanos)
			.containsExactlyElementsOf(ceilings.stream().map((ceiling) -> expected.nextLong(ceiling + 1)).toList());
		for (int i = 0; i < ceilings.size(); i++) {
			assertThat(this.sleeper.sleeps().get(i).toNanos()).isBetween(0L, ceilings.get(i));
		}
	}

	@Test
	void backoffDoublesFromBaseDelayUpToMaxDelay() {
		RestClient client = client(RateLimitClientInterceptor.builder()
			.baseDelay(Duration.ofMillis(100))
			.maxDelay(Duration.ofSeconds(1))
			.maxAttempts(7)
			.random(new HighestDraw()));
		this.server.expect(times(6), requestTo(API)).andRespond(withStatus(TOO_MANY_REQUESTS));
		expect(API).andRespond(withSuccess());
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(200);
		this.server.verify();
		assertThat(this.sleeper.sleeps()).extracting(Duration::toMillis).containsExactly(100L, 200L, 400L, 800L, 1000L,
				1000L);
	}

	@Test
	void backoffIsShortenedToFitMaxTotalWaitThenGivesUp() {
		RestClient client = client(RateLimitClientInterceptor.builder()
			.baseDelay(Duration.ofSeconds(1))
			.maxAttempts(5)
			.maxTotalWait(Duration.ofMillis(2500))
			.random(new HighestDraw()));
		this.server.expect(times(3), requestTo(API)).andRespond(withStatus(TOO_MANY_REQUESTS));
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(429);
		this.server.verify();
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(1), Duration.ofMillis(1500));
	}

	@Test
	void returnsResponseWhoseRetryAfterExceedsMaxTotalWaitWithoutWaiting() {
		RestClient client = client(RateLimitClientInterceptor.builder().maxTotalWait(Duration.ofSeconds(30)));
		expect(API).andRespond(withStatus(TOO_MANY_REQUESTS).header("Retry-After", "31"));
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(429);
		this.server.verify();
		assertThat(this.sleeper.sleeps()).isEmpty();
	}

	@Test
	void returnsResponseOnceRetryAftersAddUpBeyondMaxTotalWait() {
		RestClient client = client(RateLimitClientInterceptor.builder().maxTotalWait(Duration.ofSeconds(30)));
		this.server.expect(times(2), requestTo(API))
			.andRespond(withStatus(TOO_MANY_REQUESTS).header("Retry-After", "20"));
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(429);
		this.server.verify();
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(20));
	}

	@ParameterizedTest
	@ValueSource(strings = { "soon", "-1", "1.5", "Wed, 01 Jan 2025 00:00:05 CET", "" })
	void treatsMalformedRetryAfterAsAbsent(String retryAfter) {
		RestClient client = client(RateLimitClientInterceptor.builder()
			.baseDelay(Duration.ofMillis(100))
			.random(new HighestDraw()));
		expect(API).andRespond(withStatus(TOO_MANY_REQUESTS).header("Retry-After", retryAfter));
		expect(API).andRespond(withSuccess());
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(200);
		this.server.verify();
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofMillis(100));
	}

	@ParameterizedTest
	@ValueSource(strings = { "GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE" })
	void retriesIdempotentMethods(String name) {
		RestClient client = client(RateLimitClientInterceptor.builder());
		HttpMethod httpMethod = HttpMethod.valueOf(name);
		this.server.expect(requestTo(API))
			.andExpect(method(httpMethod))
			.andRespond(withStatus(TOO_MANY_REQUESTS).header("Retry-After", "1"));
		this.server.expect(requestTo(API)).andExpect(method(httpMethod)).andRespond(withSuccess());
		assertThat(status(client, httpMethod, API)).isEqualTo(200);
		this.server.verify();
	}

	@ParameterizedTest
	@ValueSource(strings = { "POST", "PATCH" })
	void returnsResponseToNonIdempotentMethodWithoutRetrying(String name) {
		RestClient client = client(RateLimitClientInterceptor.builder());
		expect(API).andRespond(withStatus(TOO_MANY_REQUESTS).header("Retry-After", "1"));
		assertThat(status(client, HttpMethod.valueOf(name), API)).isEqualTo(429);
		this.server.verify();
		assertThat(this.sleeper.sleeps()).isEmpty();
	}

	@Test
	void retriesNonIdempotentMethodWithTheSameBodyWhenOptedIn() {
		RestClient client = client(RateLimitClientInterceptor.builder().retryNonIdempotent(true));
		this.server.expect(requestTo(API))
			.andExpect(method(HttpMethod.POST))
			.andExpect(content().string("{\"name\":\"widget\"}"))
			.andRespond(withStatus(TOO_MANY_REQUESTS).header("Retry-After", "2"));
		this.server.expect(requestTo(API))
			.andExpect(method(HttpMethod.POST))
			.andExpect(content().string("{\"name\":\"widget\"}"))
			.andRespond(withSuccess());
		int status = client.post()
			.uri(API)
			.body("{\"name\":\"widget\"}")
			.exchange((request, response) -> response.getStatusCode().value());
		assertThat(status).isEqualTo(200);
		this.server.verify();
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(2));
	}

	@Test
	void returnsLastResponseAfterMaxAttempts() {
		RestClient client = client(RateLimitClientInterceptor.builder().maxAttempts(3));
		this.server.expect(times(3), requestTo(API))
			.andRespond(withStatus(TOO_MANY_REQUESTS).header("Retry-After", "1"));
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(429);
		this.server.verify();
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(1));
	}

	@Test
	void sendsOnlyOnceWhenMaxAttemptsIsOne() {
		RestClient client = client(RateLimitClientInterceptor.builder().maxAttempts(1));
		expect(API).andRespond(withStatus(TOO_MANY_REQUESTS).header("Retry-After", "1"));
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(429);
		this.server.verify();
		assertThat(this.sleeper.sleeps()).isEmpty();
	}

	@Test
	void retriesServiceUnavailableThatCarriesRetryAfter() {
		RestClient client = client(RateLimitClientInterceptor.builder());
		expect(API).andRespond(withStatus(HttpStatus.SERVICE_UNAVAILABLE).header("Retry-After", "2"));
		expect(API).andRespond(withSuccess());
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(200);
		this.server.verify();
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(2));
	}

	@Test
	void returnsServiceUnavailableWithoutRetryAfter() {
		RestClient client = client(RateLimitClientInterceptor.builder());
		expect(API).andRespond(withStatus(HttpStatus.SERVICE_UNAVAILABLE));
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(503);
		this.server.verify();
		assertThat(this.sleeper.sleeps()).isEmpty();
	}

	@Test
	void returnsServiceUnavailableWithMalformedRetryAfter() {
		RestClient client = client(RateLimitClientInterceptor.builder());
		expect(API).andRespond(withStatus(HttpStatus.SERVICE_UNAVAILABLE).header("Retry-After", "later"));
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(503);
		this.server.verify();
		assertThat(this.sleeper.sleeps()).isEmpty();
	}

	@ParameterizedTest
	@ValueSource(ints = { 200, 400, 500, 502, 504 })
	void leavesOtherStatusesAlone(int status) {
		RestClient client = client(RateLimitClientInterceptor.builder());
		expect(API).andRespond(withStatus(HttpStatus.valueOf(status)).header("Retry-After", "1"));
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(status);
		this.server.verify();
		assertThat(this.sleeper.sleeps()).isEmpty();
	}

	@Test
	void closesEveryRetriedResponseButNotTheOneReturned() throws IOException {
		RateLimitClientInterceptor interceptor = RateLimitClientInterceptor.builder()
			.clock(this.clock)
			.sleeper(this.sleeper)
			.build();
		TrackedResponse first = new TrackedResponse(429, "1");
		TrackedResponse second = new TrackedResponse(503, "1");
		TrackedResponse third = new TrackedResponse(200, null);
		StubExecution execution = new StubExecution(first, second, third);
		byte[] body = "payload".getBytes();
		try (ClientHttpResponse response = interceptor.intercept(request(HttpMethod.PUT), body, execution)) {
			assertThat(response).isSameAs(third);
			assertThat(first.closed).isTrue();
			assertThat(second.closed).isTrue();
			assertThat(third.closed).isFalse();
		}
		assertThat(execution.bodies).hasSize(3).allSatisfy((sent) -> assertThat(sent).isEqualTo(body));
	}

	@Test
	void leavesReturnedResponseOpenWhenAttemptsRunOut() throws IOException {
		RateLimitClientInterceptor interceptor = RateLimitClientInterceptor.builder()
			.maxAttempts(2)
			.clock(this.clock)
			.sleeper(this.sleeper)
			.build();
		TrackedResponse first = new TrackedResponse(429, "1");
		TrackedResponse second = new TrackedResponse(429, "1");
		ClientHttpResponse response = interceptor.intercept(request(HttpMethod.GET), new byte[0],
				new StubExecution(first, second));
		assertThat(response).isSameAs(second);
		assertThat(first.closed).isTrue();
		assertThat(second.closed).isFalse();
	}

	@Test
	void interruptedWaitFailsWithInterruptedIoExceptionAndKeepsTheInterrupt() throws IOException {
		RateLimitClientInterceptor interceptor = RateLimitClientInterceptor.builder().sleeper((duration) -> {
			throw new InterruptedException();
		}).build();
		TrackedResponse first = new TrackedResponse(429, "1");
		try {
			assertThatExceptionOfType(InterruptedIOException.class)
				.isThrownBy(() -> interceptor.intercept(request(HttpMethod.GET), new byte[0], new StubExecution(first)))
				.withMessageContaining("GET http://api.example.com/items");
			assertThat(Thread.currentThread().isInterrupted()).isTrue();
			assertThat(first.closed).isTrue();
		}
		finally {
			Thread.interrupted();
		}
	}

	@Test
	void pacesNextCallToHostWhoseQuotaIsExhausted() {
		RestClient client = client(RateLimitClientInterceptor.builder());
		expect(API).andRespond(withSuccess().header("RateLimit", "\"default\";r=0;t=7"));
		expect("http://other.example.com/items").andRespond(withSuccess());
		expect("http://api.example.com:8080/items").andRespond(withSuccess());
		expect(API).andRespond(withSuccess());
		expect(API).andRespond(withSuccess());
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(200);
		assertThat(status(client, HttpMethod.GET, "http://other.example.com/items")).isEqualTo(200);
		assertThat(status(client, HttpMethod.GET, "http://api.example.com:8080/items")).isEqualTo(200);
		assertThat(this.sleeper.sleeps()).isEmpty();
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(200);
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(7));
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(200);
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(7));
		this.server.verify();
	}

	@Test
	void pacesOnlyForWhatIsLeftOfTheReset() {
		RestClient client = client(RateLimitClientInterceptor.builder());
		expect(API).andRespond(withSuccess().header("RateLimit", "\"default\";r=0;t=7"));
		expect(API).andRespond(withSuccess());
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(200);
		this.clock.advance(Duration.ofSeconds(5));
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(200);
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(2));
		this.server.verify();
	}

	@Test
	void pacesEveryMethodAndLearnsFromErrorResponsesToo() {
		RestClient client = client(RateLimitClientInterceptor.builder());
		expect(API).andRespond(withStatus(HttpStatus.BAD_REQUEST).header("RateLimit", "\"default\";r=0;t=3"));
		expect(API).andRespond(withSuccess());
		assertThat(status(client, HttpMethod.POST, API)).isEqualTo(400);
		assertThat(status(client, HttpMethod.POST, API)).isEqualTo(200);
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(3));
		this.server.verify();
	}

	@Test
	void doesNotPaceWhileQuotaRemainsOrWhenTheFieldIsMalformed() {
		RestClient client = client(RateLimitClientInterceptor.builder());
		expect(API).andRespond(withSuccess().header("RateLimit", "\"default\";r=1;t=7"));
		expect(API).andRespond(withSuccess().header("RateLimit", "\"default\";r=0;t=7,"));
		expect(API).andRespond(withSuccess());
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(200);
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(200);
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(200);
		assertThat(this.sleeper.sleeps()).isEmpty();
		this.server.verify();
	}

	@Test
	void doesNotPaceWhenPacingIsOff() {
		RestClient client = client(RateLimitClientInterceptor.builder().pace(false));
		expect(API).andRespond(withSuccess().header("RateLimit", "\"default\";r=0;t=7"));
		expect(API).andRespond(withSuccess());
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(200);
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(200);
		assertThat(this.sleeper.sleeps()).isEmpty();
		this.server.verify();
	}

	@Test
	void sendsAtOnceWhenPacingWouldExceedMaxTotalWait() {
		RestClient client = client(RateLimitClientInterceptor.builder().maxTotalWait(Duration.ofSeconds(30)));
		expect(API).andRespond(withSuccess().header("RateLimit", "\"daily\";r=0;t=3600"));
		expect(API).andRespond(withStatus(TOO_MANY_REQUESTS).header("Retry-After", "3600"));
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(200);
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(429);
		assertThat(this.sleeper.sleeps()).isEmpty();
		this.server.verify();
	}

	@Test
	void pacingCountsTowardMaxTotalWait() {
		RestClient client = client(RateLimitClientInterceptor.builder().maxTotalWait(Duration.ofSeconds(30)));
		expect(API).andRespond(withSuccess().header("RateLimit", "\"default\";r=0;t=20"));
		expect(API).andRespond(withStatus(TOO_MANY_REQUESTS).header("Retry-After", "15"));
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(200);
		assertThat(status(client, HttpMethod.GET, API)).isEqualTo(429);
		assertThat(this.sleeper.sleeps()).containsExactly(Duration.ofSeconds(20));
		this.server.verify();
	}

	@Test
	void rejectsInvalidSettings() {
		RateLimitClientInterceptor.Builder builder = RateLimitClientInterceptor.builder();
		assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> builder.maxAttempts(0))
			.withMessage("maxAttempts must be at least 1");
		assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> builder.baseDelay(Duration.ZERO))
			.withMessage("baseDelay must be positive");
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> builder.maxDelay(Duration.ofSeconds(-1)))
			.withMessage("maxDelay must be positive");
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> builder.maxTotalWait(Duration.ofSeconds(-1)))
			.withMessage("maxTotalWait must not be negative");
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> builder.baseDelay(Duration.ofSeconds(2)).maxDelay(Duration.ofSeconds(1)).build())
			.withMessage("baseDelay must not be greater than maxDelay");
	}

	private RestClient client(RateLimitClientInterceptor.Builder interceptor) {
		RestClient.Builder builder = RestClient.builder()
			.requestInterceptor(interceptor.clock(this.clock).sleeper(this.sleeper).build());
		this.server = MockRestServiceServer.bindTo(builder).build();
		return builder.build();
	}

	private ResponseActions expect(String uri) {
		return this.server.expect(requestTo(uri));
	}

	private static int status(RestClient client, HttpMethod httpMethod, String uri) {
		return client.method(httpMethod).uri(uri).exchange((request, response) -> response.getStatusCode().value());
	}

	private static List<Long> millisToNanos(long... millis) {
		return Arrays.stream(millis).mapToObj((value) -> Duration.ofMillis(value).toNanos()).toList();
	}

	private static HttpRequest request(HttpMethod httpMethod) {
		return new MockClientHttpRequest(httpMethod, URI.create(API));
	}

	/** Always draws the highest value allowed, so waits equal their ceilings. */
	private static final class HighestDraw implements RandomGenerator {

		@Override
		public long nextLong() {
			throw new UnsupportedOperationException();
		}

		@Override
		public long nextLong(long bound) {
			return bound - 1;
		}

	}

	private static final class TrackedResponse extends MockClientHttpResponse {

		private boolean closed;

		TrackedResponse(int status, String retryAfter) {
			super(new byte[0], status);
			if (retryAfter != null) {
				getHeaders().set("Retry-After", retryAfter);
			}
		}

		@Override
		public void close() {
			this.closed = true;
			super.close();
		}

	}

	private static final class StubExecution implements ClientHttpRequestExecution {

		private final Deque<ClientHttpResponse> responses;

		private final List<byte[]> bodies = new ArrayList<>();

		StubExecution(ClientHttpResponse... responses) {
			this.responses = new ArrayDeque<>(List.of(responses));
		}

		@Override
		public ClientHttpResponse execute(HttpRequest request, byte[] body) {
			this.bodies.add(body);
			return this.responses.remove();
		}

	}

}
