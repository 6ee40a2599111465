package dev.ratelimit.spring.autoconfigure;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.testing.ManualScheduler;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.TestApplication;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.multipart.MultipartFile;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests on a real server that a leaky bucket holds each queued request until its slot, without a container
 * thread, and releases them in order. The limiter and the scheduler share a manual clock, so a request is
 * released when the test moves the clock to its slot, never by the passing of real time.
 */
@ExtendWith({ QuietOutput.class, OutputCaptureExtension.class })
class ShapingServerIT {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private final ManualTimeSource time = new ManualTimeSource();

	private final ManualScheduler scheduler = new ManualScheduler(this.time);

	private final HttpClient http = HttpClient.newHttpClient();

	private final BlockingQueue<HttpResponse<String>> responses = new LinkedBlockingQueue<>();

	@Test
	void holdsQueuedRequestsUntilTheirSlotsAndReleasesThemInTheOrderTheyCame() {
		run((server) -> {
			server.sendAtOnce("/queued", 10);
			List<HttpResponse<String>> atOnce = server.decided(10);
			assertThat(atOnce).extracting(HttpResponse::statusCode).containsOnly(200, 429);
			HttpResponse<String> first = only(atOnce, 200);
			assertThat(first.headers().firstValue("RateLimit")).hasValue("\"queued\";r=5;t=1");
			assertThat(atOnce).filteredOn((response) -> response.statusCode() == 429)
				.hasSize(4)
				.allSatisfy((response) -> assertThat(response.headers().firstValue("Retry-After")).hasValue("1"));
			assertThat(this.scheduler.pendingDelays()).containsExactly(Duration.ofMillis(500), Duration.ofMillis(1000),
					Duration.ofMillis(1500), Duration.ofMillis(2000), Duration.ofMillis(2500));
			// each is released at its slot, in the order it was admitted: r counts down the places it took
			String[] headers = { "r=4;t=1", "r=3;t=2", "r=2;t=2", "r=1;t=3", "r=0;t=3" };
			for (String header : headers) {
				assertThat(this.scheduler.runNext()).isOne();
				HttpResponse<String> released = server.next();
				assertThat(released.statusCode()).isEqualTo(200);
				assertThat(released.body()).isEqualTo("queued");
				assertThat(released.headers().firstValue("RateLimit")).hasValue("\"queued\";" + header);
			}
			MeterRegistry registry = server.context.getBean(MeterRegistry.class);
			assertThat(count(registry, "queued", "allowed")).isEqualTo(1);
			assertThat(count(registry, "queued", "delayed")).isEqualTo(5);
			assertThat(count(registry, "queued", "rejected")).isEqualTo(4);
		});
	}

	@Test
	void passesTheWholeBurstAtOnceWithNoDelay() {
		run((server) -> {
			server.sendAtOnce("/no-delay", 10);
			assertThat(server.decided(10)).extracting(HttpResponse::statusCode)
				.containsOnly(200, 429)
				.filteredOn((status) -> status == 200)
				.hasSize(6);
			assertThat(this.scheduler.pending()).isZero();
			// the places still free up one per interval
			server.sendAtOnce("/no-delay", 1);
			assertThat(server.next().statusCode()).isEqualTo(429);
			this.time.advance(Duration.ofMillis(500));
			server.sendAtOnce("/no-delay", 2);
			assertThat(server.decided(2)).extracting(HttpResponse::statusCode).containsExactlyInAnyOrder(200, 429);
		});
	}

	@Test
	void passesTheFirstRequestsOfTheBurstAtOnceAndHoldsTheRestWhenARuleSaysSo() {
		run((server) -> {
			server.sendAtOnce("/ruled", 10);
			assertThat(server.decided(10)).extracting(HttpResponse::statusCode)
				.filteredOn((status) -> status == 200)
				.hasSize(3);
			assertThat(this.scheduler.pendingDelays()).containsExactly(Duration.ofMillis(500), Duration.ofMillis(1000),
					Duration.ofMillis(1500));
			for (int i = 0; i < 3; i++) {
				this.scheduler.runNext();
				assertThat(server.next().statusCode()).isEqualTo(200);
			}
		}, "--ratelimit.rules[0].path=/ruled", "--ratelimit.rules[0].limit=2", "--ratelimit.rules[0].window=1s",
				"--ratelimit.rules[0].algorithm=leaky-bucket", "--ratelimit.rules[0].burst=5",
				"--ratelimit.rules[0].delay-after=2");
	}

	@Test
	void appliesAnOverrideOfTheMode() {
		run((server) -> {
			server.sendAtOnce("/queued", 10);
			assertThat(server.decided(10)).extracting(HttpResponse::statusCode)
				.filteredOn((status) -> status == 200)
				.hasSize(6);
		}, "--ratelimit.policies.queued.no-delay=true");
	}

	@Test
	void holdsARequestWhoseHandlerIsAsynchronousItself() {
		run((server) -> {
			server.sendAtOnce("/callable", 2);
			assertThat(server.next().body()).isEqualTo("callable");
			assertThat(this.scheduler.awaitPending(1, WAIT)).isTrue();
			this.scheduler.runNext();
			HttpResponse<String> released = server.next();
			assertThat(released.statusCode()).isEqualTo(200);
			assertThat(released.body()).isEqualTo("callable");
		});
	}

	@Test
	void holdsAMultipartRequestWhenSpringMvcParsesItLazily() {
		run((server) -> {
			server.upload(3);
			assertThat(server.next().body()).isEqualTo("3 bytes");
			server.upload(5);
			assertThat(this.scheduler.awaitPending(1, WAIT)).isTrue();
			this.scheduler.runNext();
			HttpResponse<String> released = server.next();
			assertThat(released.statusCode()).isEqualTo(200);
			assertThat(released.body()).isEqualTo("5 bytes");
		}, "--spring.servlet.multipart.resolve-lazily=true");
	}

	@Test
	void refusesToHoldAMultipartRequestThatSpringMvcHasParsedAlready(CapturedOutput output) {
		run((server) -> {
			server.upload(3);
			assertThat(server.next().statusCode()).isEqualTo(200);
			server.upload(5);
			assertThat(server.next().statusCode()).isEqualTo(500);
			assertThat(this.scheduler.pending()).isZero();
			assertThat(output).contains("java.lang.IllegalStateException: Cannot hold /upload until its slot: "
					+ "Spring MVC has already parsed its multipart body");
		});
	}

	@Test
	void releasesHeldRequestsDuringAGracefulShutdown(CapturedOutput output) throws Exception {
		ConfigurableApplicationContext context = start("--logging.level.org.springframework.boot.tomcat=INFO");
		Server server = new Server(context);
		server.sendAtOnce("/queued", 2);
		assertThat(server.next().statusCode()).isEqualTo(200);
		assertThat(this.scheduler.awaitPending(1, WAIT)).isTrue();
		Thread closing = new Thread(context::close);
		closing.start();
		long deadline = System.nanoTime() + WAIT.toNanos();
		while (!output.getOut().contains("Commencing graceful shutdown")) {
			assertThat(System.nanoTime()).as("graceful shutdown in time").isLessThan(deadline);
			Thread.onSpinWait();
		}
		this.scheduler.runNext();
		HttpResponse<String> released = server.next();
		assertThat(released.statusCode()).isEqualTo(200);
		closing.join(WAIT.toMillis());
		assertThat(closing.isAlive()).isFalse();
	}

	private void run(ServerTest test, String... args) {
		try (ConfigurableApplicationContext context = start(args)) {
			test.run(new Server(context));
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	private ConfigurableApplicationContext start(String... args) {
		SpringApplication application = new SpringApplication(App.class);
		application.addInitializers((context) -> {
			context.getBeanFactory().registerSingleton("timeSource", this.time);
			context.getBeanFactory()
				.registerSingleton(RateLimitAutoConfiguration.SHAPING_SCHEDULER_BEAN_NAME, this.scheduler);
		});
		List<String> arguments = new ArrayList<>(List.of("--server.port=0", "--server.address=127.0.0.1"));
		arguments.addAll(List.of(args));
		return application.run(arguments.toArray(String[]::new));
	}

	private static HttpResponse<String> only(List<HttpResponse<String>> responses, int status) {
		List<HttpResponse<String>> matching = responses.stream()
			.filter((response) -> response.statusCode() == status)
			.toList();
		assertThat(matching).hasSize(1);
		return matching.get(0);
	}

	private static double count(MeterRegistry registry, String policy, String outcome) {
		return registry.get("ratelimit.decisions").tags("policy", policy, "outcome", outcome).counter().count();
	}

	@FunctionalInterface
	private interface ServerTest {

		void run(Server server) throws Exception;

	}

	private final class Server {

		private final ConfigurableApplicationContext context;

		private final int port;

		Server(ConfigurableApplicationContext context) {
			this.context = context;
			this.port = ((WebServerApplicationContext) context).getWebServer().getPort();
		}

		/** Sends requests without waiting for their answers, which arrive in {@link #responses}. */
		void sendAtOnce(String path, int count) {
			HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path)).build();
			for (int i = 0; i < count; i++) {
				send(request);
			}
		}

		void upload(int size) {
			String boundary = "shaping-boundary";
			byte[] head = ("--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f.bin\"\r\n"
					+ "Content-Type: application/octet-stream\r\n\r\n")
				.getBytes(StandardCharsets.US_ASCII);
			byte[] tail = ("\r\n--" + boundary + "--\r\n").getBytes(StandardCharsets.US_ASCII);
			byte[] body = new byte[head.length + size + tail.length];
			System.arraycopy(head, 0, body, 0, head.length);
			System.arraycopy(tail, 0, body, head.length + size, tail.length);
			send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/upload"))
				.header("Content-Type", "multipart/form-data; boundary=" + boundary)
				.POST(HttpRequest.BodyPublishers.ofByteArray(body))
				.build());
		}

		private void send(HttpRequest request) {
			ShapingServerIT.this.http.sendAsync(request, HttpResponse.BodyHandlers.ofString())
				.thenAccept(ShapingServerIT.this.responses::add);
		}

		/**
		 * Waits until every one of {@code sent} requests was either answered or held, and returns the answers.
		 */
		List<HttpResponse<String>> decided(int sent) throws InterruptedException {
			List<HttpResponse<String>> answered = new ArrayList<>();
			long deadline = System.nanoTime() + WAIT.toNanos();
			while (answered.size() + ShapingServerIT.this.scheduler.pending() < sent) {
				HttpResponse<String> response = ShapingServerIT.this.responses.poll(10, TimeUnit.MILLISECONDS);
				if (response != null) {
					answered.add(response);
				}
				assertThat(System.nanoTime()).as("all requests decided in time").isLessThan(deadline);
			}
			return answered;
		}

		HttpResponse<String> next() throws InterruptedException {
			HttpResponse<String> response = ShapingServerIT.this.responses.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
			assertThat(response).as("response in time").isNotNull();
			return response;
		}

	}

	@TestApplication
	@Import(ShapingController.class)
	static class App {

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

	@RestController
	static class ShapingController {

		@GetMapping("/queued")
		@RateLimited(limit = 2, window = "1s", burst = 5, algorithm = Algorithm.LEAKY_BUCKET, name = "queued")
		String queued() {
			return "queued";
		}

		@GetMapping("/no-delay")
		@RateLimited(limit = 2, window = "1s", burst = 5, algorithm = Algorithm.LEAKY_BUCKET, noDelay = true)
		String noDelay() {
			return "no delay";
		}

		@GetMapping("/ruled")
		String ruled() {
			return "ruled";
		}

		@GetMapping("/callable")
		@RateLimited(limit = 2, window = "1s", burst = 5, algorithm = Algorithm.LEAKY_BUCKET)
		Callable<String> callable() {
			return () -> "callable";
		}

		@PostMapping("/upload")
		@RateLimited(limit = 2, window = "1s", burst = 5, algorithm = Algorithm.LEAKY_BUCKET)
		String upload(@RequestParam MultipartFile file) {
			return file.getSize() + " bytes";
		}

	}

}
