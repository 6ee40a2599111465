package dev.ratelimit.spring.webflux;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.testing.BlockingCallsFail;
import dev.ratelimit.core.testing.DelayingProxy;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.TestApplication;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests what a WebFlux application answers off the happy path, on a real Reactor Netty server with BlockHound
 * watching its event loops: a replaced rejection handler's body, a rejection of a request that Reactor Netty had
 * queued on a keep-alive connection, {@code count-status} limits whose handler fails after it returned, and a Redis
 * that stops answering, under each failure policy.
 */
@ExtendWith({ BlockingCallsFail.class, RedisExtension.class })
class WebFluxOutcomesIT {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	/** The Redis timeout of these tests, the default. */
	private static final Duration TIMEOUT = Duration.ofMillis(100);

	/** How long a request waits for Redis' reply, the default. */
	private static final Duration MAX_WAIT = Duration.ofMillis(500);

	/** What a request may wait beyond the maximum wait: the store's promise. */
	private static final Duration LATENCY_SLACK = Duration.ofMillis(50);

	private final HttpClient http = HttpClient.newHttpClient();

	private TestRedis redis;

	@BeforeEach
	void useRedis(TestRedis redis) {
		this.redis = redis;
	}

	@Test
	void writesTheProblemOfAReplacedHandlerWithTheHeadersOfEveryRejection() throws Exception {
		ReactiveRateLimitExceededHandler handler = (exchange, rejection) -> {
			ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE,
					"Slow down on " + exchange.getRequest().getPath().value());
			problem.setProperty("retryAfterSeconds", rejection.retryAfterSeconds());
			return problem;
		};
		try (ConfigurableApplicationContext context = start("memory", handler)) {
			int port = port(context);
			for (int i = 0; i < 3; i++) {
				assertThat(get(port, "/limited").statusCode()).isEqualTo(200);
			}
			HttpResponse<String> rejected = get(port, "/limited");
			assertThat(rejected.statusCode()).isEqualTo(503);
			assertThat(rejected.headers().firstValue("Content-Type")).hasValue("application/problem+json");
			assertThat(rejected.headers().firstValue("Retry-After")).hasValue("1200");
			assertThat(rejected.headers().firstValue("RateLimit-Policy")).hasValue("\"limited\";q=3;w=3600");
			JsonNode problem = JSON.readTree(rejected.body());
			assertThat(problem.at("/status").asInt()).isEqualTo(503);
			assertThat(problem.at("/detail").asString()).isEqualTo("Slow down on /limited");
			assertThat(problem.at("/retryAfterSeconds").asLong()).isEqualTo(1200);
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "memory", "redis" })
	void countsOnlyTheCountedStatusOfAHandlerThatFailsAfterItReturned(String store) throws Exception {
		// the failures are on purpose: their stack traces would only hide a real one in the build's output
		try (ConfigurableApplicationContext context = start(store, this.redis.uri(), null,
				"--logging.level.org.springframework.boot.webflux.autoconfigure.error=off",
				"--logging.level.org.springframework.web.HttpLogging=off")) {
			int port = port(context);
			List<Integer> statuses = new ArrayList<>();
			// neither a success nor another failure counts: each gives its permit back
			for (String outcome : List.of("ok", "ok", "ok", "broken", "broken", "broken", "forbidden", "forbidden",
					"ok", "broken")) {
				statuses.add(get(port, "/attempt?outcome=" + outcome).statusCode());
			}
			assertThat(statuses).containsExactly(200, 200, 200, 500, 500, 500, 403, 403, 429, 429);
		}
	}

	/**
	 * Reactor Netty before 1.3.8 stops reading a keep-alive connection for good when a request that waited in its
	 * queue, sent while the one before it was still being answered, is answered within the task that dispatched
	 * it (reactor/reactor-netty#4361): the next request on that connection then waits forever. A rejection
	 * decided in memory is such an answer, unless it is written in a task of its own.
	 */
	@Test
	void keepsReadingAConnectionAfterARejectionOfARequestThatWaitedInTheQueue() throws Exception {
		try (ConfigurableApplicationContext context = start("memory", null);
				Socket socket = new Socket("127.0.0.1", port(context))) {
			socket.setSoTimeout((int) Duration.ofSeconds(5).toMillis());
			String limited = "GET /limited HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
			List<Integer> statuses = new ArrayList<>();
			for (int i = 0; i < 3; i++) {
				send(socket, limited);
				statuses.add(status(socket.getInputStream()));
			}
			// the rejected request arrives while the slow one is answered, so Reactor Netty queues it
			send(socket, "GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" + limited);
			statuses.add(status(socket.getInputStream()));
			statuses.add(status(socket.getInputStream()));
			send(socket, limited);
			statuses.add(status(socket.getInputStream()));
			assertThat(statuses).containsExactly(200, 200, 200, 200, 429, 429);
		}
	}

	private static void send(Socket socket, String requests) throws IOException {
		socket.getOutputStream().write(requests.getBytes(StandardCharsets.US_ASCII));
		socket.getOutputStream().flush();
	}

	/** Reads one response of a keep-alive connection, which states its length; returns its status. */
	private static int status(InputStream in) throws IOException {
		StringBuilder head = new StringBuilder();
		while (head.indexOf("\r\n\r\n") < 0) {
			int next = in.read();
			if (next < 0) {
				throw new IOException("the connection closed after: " + head);
			}
			head.append((char) next);
		}
		String length = head.toString()
			.lines()
			.filter((line) -> line.regionMatches(true, 0, "Content-Length:", 0, 15))
			.findFirst()
			.orElseThrow(() -> new IOException("no Content-Length in: " + head));
		in.readNBytes(Integer.parseInt(length.substring(15).trim()));
		return Integer.parseInt(head.substring(9, 12));
	}

	@ParameterizedTest
	@EnumSource(FailurePolicy.class)
	void followsTheFailurePolicyWithinTheMaximumWaitWhileRedisHangs(FailurePolicy failurePolicy) throws Exception {
		try (DelayingProxy proxy = DelayingProxy.start(URI.create(this.redis.uri()).getPort());
				ConfigurableApplicationContext context = start("redis", proxy.uri(), null,
						"--ratelimit.redis.timeout=" + TIMEOUT.toMillis() + "ms",
						"--ratelimit.redis.failure-policy=" + failurePolicy)) {
			int port = port(context);
			assertThat(get(port, "/limited").statusCode()).isEqualTo(200);
			proxy.hold();
			// the first failure of a JVM loads the classes of the failure path: not part of what is measured
			List<Integer> statuses = new ArrayList<>(List.of(get(port, "/limited").statusCode()));
			ServedTimes served = context.getBean(ServedTimes.class);
			served.clear();
			List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
			for (int i = 0; i < 8; i++) {
				responses.add(this.http.sendAsync(request(port, "/limited"), HttpResponse.BodyHandlers.ofString()));
			}
			for (CompletableFuture<HttpResponse<String>> response : responses) {
				statuses.add(response.get(10, TimeUnit.SECONDS).statusCode());
			}
			// timed by the server, from the request's arrival at its filters to its response's commit: the client's
			// connection set-up for eight requests at once is no part of what the store promises
			assertThat(served.nanos()).hasSize(responses.size())
				.allSatisfy((nanos) -> assertThat(Duration.ofNanos(nanos)).as("latency while Redis hangs")
					.isLessThan(MAX_WAIT.plus(LATENCY_SLACK)));
			switch (failurePolicy) {
				case ALLOW -> assertThat(statuses).containsOnly(200);
				case DENY -> assertThat(statuses).containsOnly(429);
				// Redis said 2 of 3 were left; the first call given up on may have taken one of them, and each
				// call still under way or given up on since may have taken the other
				case LOCAL -> assertThat(statuses.stream().filter((status) -> status == 200)).hasSize(1);
			}
			proxy.resume();
			// Redis decides again: it admitted one request of three before the fault, and under LOCAL it is told
			// of the one the failure policy admitted
			List<Integer> after = List.of(awaitRedis(context, port), get(port, "/limited").statusCode(),
					get(port, "/limited").statusCode());
			assertThat(after).containsExactlyElementsOf(
					(failurePolicy == FailurePolicy.LOCAL) ? List.of(200, 429, 429) : List.of(200, 200, 429));
		}
	}

	/** Waits, five seconds at most, until the store sees Redis answer again; returns a request's status. */
	private int awaitRedis(ConfigurableApplicationContext context, int port) throws Exception {
		RedisRateLimitStore store = context.getBean(RedisRateLimitStore.class);
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		while (store.failures().orElseThrow().status().failing() && System.nanoTime() < deadline) {
			LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
		}
		return get(port, "/limited").statusCode();
	}

	private ConfigurableApplicationContext start(String store, ReactiveRateLimitExceededHandler handler) {
		return start(store, this.redis.uri(), handler);
	}

	private ConfigurableApplicationContext start(String store, String redisUri, ReactiveRateLimitExceededHandler handler,
			String... arguments) {
		List<String> args = new ArrayList<>(List.of("--server.port=0", "--ratelimit.store=" + store,
				"--spring.data.redis.url=" + redisUri,
				"--ratelimit.redis.key-prefix=webflux-outcomes-" + System.nanoTime() + ":"));
		args.addAll(List.of(arguments));
		SpringApplication application = new SpringApplication(App.class);
		application.setWebApplicationType(WebApplicationType.REACTIVE);
		if (handler != null) {
			application.addInitializers(
					(context) -> context.getBeanFactory().registerSingleton("rateLimitExceededHandler", handler));
		}
		return application.run(args.toArray(String[]::new));
	}

	private static int port(ConfigurableApplicationContext context) {
		return ((WebServerApplicationContext) context).getWebServer().getPort();
	}

	private HttpResponse<String> get(int port, String path) throws Exception {
		return this.http.send(request(port, path), HttpResponse.BodyHandlers.ofString());
	}

	private static HttpRequest request(int port, String path) {
		// an answer that never comes fails the test rather than hanging the build
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(10))
			.build();
	}

	@TestApplication
	@Import({ OutcomeController.class, ServedTimes.class })
	static class App {

	}

	/** Times each request from its arrival at the server's first filter to its response's commit. */
	static class ServedTimes implements WebFilter, Ordered {

		private final Queue<Long> nanos = new ConcurrentLinkedQueue<>();

		@Override
		public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
			long arrived = System.nanoTime();
			exchange.getResponse()
				.beforeCommit(() -> Mono.fromRunnable(() -> this.nanos.add(System.nanoTime() - arrived)));
			return chain.filter(exchange);
		}

		@Override
		public int getOrder() {
			return Ordered.HIGHEST_PRECEDENCE;
		}

		void clear() {
			this.nanos.clear();
		}

		List<Long> nanos() {
			return List.copyOf(this.nanos);
		}

	}

	@RestController
	static class OutcomeController {

		@GetMapping("/limited")
		@RateLimited(limit = 3, window = "1h", name = "limited")
		Mono<String> limited() {
			return Mono.just("limited");
		}

		@GetMapping("/slow")
		Mono<String> slow() {
			return Mono.delay(Duration.ofMillis(50)).thenReturn("slow");
		}

		/** Fails, when it fails, only after it returned: the error comes through the returned publisher. */
		@GetMapping("/attempt")
		@RateLimited(limit = 2, window = "1h", name = "attempt", countStatus = 403)
		Mono<String> attempt(@RequestParam String outcome) {
			Mono<String> later = Mono.delay(Duration.ofMillis(5)).thenReturn(outcome);
			return switch (outcome) {
				case "forbidden" -> later.then(Mono.error(new ResponseStatusException(HttpStatus.FORBIDDEN)));
				case "broken" -> later.then(Mono.error(new IllegalStateException("broken on purpose")));
				default -> later;
			};
		}

	}

}
