package dev.ratelimit.spring.client;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real HTTP server on a loopback port limits calls to {@value #LIMIT} per {@value #WINDOW_SECONDS} s window,
 * answering the rest with 429 and a Retry-After until the window ends. Server and client share one
 * {@link MutableClock}: the client's sleeper moves it instead of sleeping, and the server records each arrival
 * on it, so the test checks real HTTP traffic against exact times without waiting.
 */
class RateLimitClientIT {

	static {
		// The JDK server writes headers and body separately; without TCP_NODELAY each response waits for a
		// delayed ACK.
		System.setProperty("sun.net.httpserver.nodelay", "true");
	}

	private static final int LIMIT = 5;

	private static final long WINDOW_SECONDS = 10;

	private static final int CALLS = 40;

	private static final int MAX_ATTEMPTS = 3;

	private static final Duration THINK_TIME = Duration.ofMillis(700);

	private final MutableClock clock = new MutableClock(Instant.parse("2025-01-01T00:00:00Z"));

	private final RecordingSleeper sleeper = new RecordingSleeper(this.clock);

	private FixedWindowServer server;

	@BeforeEach
	void startServer() throws IOException {
		this.server = new FixedWindowServer(this.clock);
	}

	@AfterEach
	void stopServer() {
		this.server.stop();
	}

	@Test
	void everyCallGetsThroughWithoutArrivingBeforeRetryAfter() {
		RestClient client = client(RateLimitClientInterceptor.builder().pace(false));
		for (int call = 0; call < CALLS; call++) {
			assertThat(get(client, call)).isEqualTo("ok");
			this.clock.advance(THINK_TIME);
		}
		assertThat(this.server.served()).isEqualTo(CALLS);
		assertThat(this.server.rejected()).isPositive();
		assertThat(this.server.earlyArrivals()).isEmpty();
		assertThat(this.server.attemptsPerCall()).hasSize(CALLS).allSatisfy((call, attempts) -> {
			assertThat(attempts).isBetween(1, MAX_ATTEMPTS);
		});
		assertThat(this.sleeper.sleeps()).hasSize(this.server.rejected());
	}

	@Test
	void pacingSpendsNoRequestOnACertain429() {
		RestClient client = client(RateLimitClientInterceptor.builder());
		for (int call = 0; call < CALLS; call++) {
			assertThat(get(client, call)).isEqualTo("ok");
			this.clock.advance(THINK_TIME);
		}
		assertThat(this.server.served()).isEqualTo(CALLS);
		assertThat(this.server.rejected()).isZero();
		assertThat(this.server.attemptsPerCall()).hasSize(CALLS).allSatisfy((call, attempts) -> {
			assertThat(attempts).isOne();
		});
		assertThat(this.sleeper.sleeps()).isNotEmpty();
	}

	private RestClient client(RateLimitClientInterceptor.Builder interceptor) {
		return RestClient.builder()
			.baseUrl(this.server.url())
			.requestInterceptor(interceptor.maxAttempts(MAX_ATTEMPTS)
				.maxTotalWait(Duration.ofSeconds(WINDOW_SECONDS))
				.clock(this.clock)
				.sleeper(this.sleeper)
				.build())
			.build();
	}

	private static String get(RestClient client, int call) {
		return client.get().uri("/work").header("X-Call", Integer.toString(call)).retrieve().body(String.class);
	}

	/**
	 * Allows {@link #LIMIT} requests per window on its clock and remembers when it told each client to come
	 * back.
	 */
	private static final class FixedWindowServer {

		private final Clock clock;

		private final HttpServer httpServer;

		private final Map<String, Integer> attemptsPerCall = new HashMap<>();

		private final List<Instant> earlyArrivals = new ArrayList<>();

		private long window = -1;

		private int used;

		private int served;

		private int rejected;

		private Instant notBefore = Instant.MIN;

		FixedWindowServer(Clock clock) throws IOException {
			this.clock = clock;
			this.httpServer = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
			this.httpServer.createContext("/work", this::handle);
			this.httpServer.start();
		}

		String url() {
			InetSocketAddress address = this.httpServer.getAddress();
			return "http://" + address.getAddress().getHostAddress() + ":" + address.getPort();
		}

		void stop() {
			this.httpServer.stop(0);
		}

		synchronized int served() {
			return this.served;
		}

		synchronized int rejected() {
			return this.rejected;
		}

		synchronized List<Instant> earlyArrivals() {
			return List.copyOf(this.earlyArrivals);
		}

		synchronized Map<String, Integer> attemptsPerCall() {
			return Map.copyOf(this.attemptsPerCall);
		}

		private void handle(HttpExchange exchange) throws IOException {
			int status;
			try (exchange) {
				synchronized (this) {
					status = decide(exchange);
				}
				byte[] body = ((status == 200) ? "ok" : "slow down").getBytes(StandardCharsets.UTF_8);
				exchange.sendResponseHeaders(status, body.length);
				try (OutputStream out = exchange.getResponseBody()) {
					out.write(body);
				}
			}
		}

		private int decide(HttpExchange exchange) {
			Instant now = this.clock.instant();
			this.attemptsPerCall.merge(exchange.getRequestHeaders().getFirst("X-Call"), 1, Integer::sum);
			if (now.isBefore(this.notBefore)) {
				this.earlyArrivals.add(now);
			}
			long window = Math.floorDiv(now.getEpochSecond(), WINDOW_SECONDS);
			if (window != this.window) {
				this.window = window;
				this.used = 0;
			}
			Instant windowEnd = Instant.ofEpochSecond((window + 1) * WINDOW_SECONDS);
			long secondsLeft = Duration.between(now, windowEnd).plusNanos(999_999_999).getSeconds();
			if (this.used < LIMIT) {
				this.used++;
				this.served++;
				exchange.getResponseHeaders()
					.set("RateLimit", "\"window\";r=" + (LIMIT - this.used) + ";t=" + secondsLeft);
				return 200;
			}
			this.rejected++;
			this.notBefore = now.plusSeconds(secondsLeft);
			exchange.getResponseHeaders().set("Retry-After", Long.toString(secondsLeft));
			exchange.getResponseHeaders().set("RateLimit", "\"window\";r=0;t=" + secondsLeft);
			return 429;
		}

	}

}
