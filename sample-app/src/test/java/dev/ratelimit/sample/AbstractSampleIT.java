package dev.ratelimit.sample;

import java.net.InetAddress;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.sample.CustomerRecords.Quota;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;
import dev.ratelimit.core.testing.ManualScheduler;
import dev.ratelimit.spring.test.ManualClock;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.client.ExchangeResult;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the sample application must do on a real server, whatever its store; the clock is moved by hand.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@ManualClock
@Import(ManualRelease.class)
abstract class AbstractSampleIT {

	/** The article's scenario B, in seconds: 46 requests of one client. */
	private static final List<Double> SCENARIO_B = scenarioB();

	/** Bound to the running server, whichever web stack serves it. */
	private RestTestClient client;

	@Autowired
	private ManualTimeSource time;

	@Autowired
	private CustomerRecords records;

	@Autowired
	private ManualScheduler scheduler;

	@Autowired
	private MeterRegistry meters;

	@LocalServerPort
	private int port;

	@BeforeEach
	void bindClient() {
		this.client = SampleClient.on(this.port);
	}

	@Test
	void limitsEachClientAddressOnItsOwn() {
		LoopbackClient first = new LoopbackClient("127.0.0.2", this.port);
		for (int i = 0; i < 10; i++) {
			assertThat(first.get("/demo/gcra").status()).isEqualTo(200);
		}
		LoopbackClient.Response denied = first.get("/demo/gcra");
		assertThat(denied.status()).isEqualTo(429);
		assertThat(denied.header("Content-Type")).startsWith("application/problem+json");
		assertThat(new LoopbackClient("127.0.0.3", this.port).get("/demo/gcra").status()).isEqualTo(200);
	}

	@Test
	void neverLimitsTheExemptAddressWhileLimitingOthers() {
		LoopbackClient exempt = new LoopbackClient("127.0.0.77", this.port);
		for (int i = 0; i < 30; i++) {
			LoopbackClient.Response response = exempt.get("/demo/gcra");
			assertThat(response.status()).isEqualTo(200);
			assertThat(response.header("RateLimit")).isNull();
			assertThat(response.header("RateLimit-Policy")).isNull();
		}
		LoopbackClient other = new LoopbackClient("127.0.0.2", this.port);
		for (int i = 0; i < 10; i++) {
			assertThat(other.get("/demo/gcra").header("RateLimit")).isEqualTo("\"DemoController.gcra\";r=" + (9 - i)
					+ ";t=" + (i + 1));
		}
		assertThat(other.get("/demo/gcra").status()).isEqualTo(429);
		assertThat(exempt.get("/demo/gcra").status()).isEqualTo(200);
	}

	@Test
	void rejectsEleventhGcraRequestWithinTenSecondsWith429() {
		for (int i = 0; i < 10; i++) {
			get("/demo/gcra").expectStatus().isOk();
		}
		this.time.advance(Duration.ofMillis(500));
		get("/demo/gcra").expectStatus()
			.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader()
			.valueEquals("Retry-After", "1")
			.expectHeader()
			.valueEquals("RateLimit-Policy", "\"DemoController.gcra\";q=10;w=10")
			.expectHeader()
			.valueEquals("RateLimit", "\"DemoController.gcra\";r=0;t=10")
			.expectHeader()
			.contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
			.expectBody()
			.json("""
					{"type": "about:blank", "title": "Too Many Requests", "status": 429,
					 "detail": "Rate limit exceeded: 10 per 10 seconds (policy 'DemoController.gcra'); retry in 1 second.",
					 "policies": ["DemoController.gcra"]}
					""");
	}

	@Test
	void countsTheNinthAndTenthGcraRequestsAsNearTheLimit() {
		double before = nearLimit("DemoController.gcra");
		for (int i = 0; i < 8; i++) {
			get("/demo/gcra").expectStatus().isOk();
		}
		assertThat(nearLimit("DemoController.gcra")).as("2 left of 10 is not below 20%").isEqualTo(before);
		get("/demo/gcra").expectStatus().isOk();
		get("/demo/gcra").expectStatus().isOk();
		get("/demo/gcra").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(nearLimit("DemoController.gcra")).isEqualTo(before + 2);
	}

	@Test
	void servesTheUnlimitedTwinOfGcraWithoutLimitOrHeaders() {
		for (int i = 0; i < 20; i++) {
			get("/demo/unlimited").expectStatus()
				.isOk()
				.expectHeader()
				.doesNotExist("RateLimit")
				.expectBody(String.class)
				.isEqualTo("gcra\n");
		}
	}

	@ParameterizedTest
	@CsvSource({ "FIXED_WINDOW, fixedWindow, 20", "SLIDING_LOG, slidingLog, 20",
			"SLIDING_WINDOW_COUNTER, slidingWindowCounter, 20", "TOKEN_BUCKET, tokenBucket, 29",
			"LEAKY_BUCKET, leakyBucket, 30", "GCRA, gcra, 29" })
	void decidesScenarioBAsTheCoreDoes(Algorithm algorithm, String method, int expectedAllowed) throws Exception {
		String path = "/demo/" + algorithm.name().toLowerCase(Locale.ROOT).replace('_', '-');
		RateLimitPolicy policy = RateLimitPolicy.of("DemoController." + method, algorithm, 10, Duration.ofSeconds(10));
		ManualTimeSource referenceTime = new ManualTimeSource();
		RateLimiter reference = InMemoryRateLimitStore.builder().timeSource(referenceTime).build().limiter(policy);
		// on a whole number of windows since the clock's zero, where both stores align their fixed windows, as the
		// reference aligns its own on its zero
		long window = policy.window().toNanos();
		long start = (this.time.nanoTime() / window + 1) * window;
		int allowed = 0;
		for (double second : SCENARIO_B) {
			long offset = Math.round(second * 1e9);
			this.time.set(start + offset);
			referenceTime.set(offset);
			Decision expected = reference.decide("ip:127.0.0.1");
			ExchangeResult result = (expected.delayNanos() > 0) ? held(path, expected.delay())
					: get(path).returnResult();
			assertThat(result.getStatus().value()).as("%s at %s s", path, second)
				.isEqualTo(expected.allowed() ? 200 : 429);
			assertThat(result.getResponseHeaders().getFirst("RateLimit")).as("%s at %s s", path, second)
				.isEqualTo("\"" + policy.name() + "\";r=" + expected.remaining() + ";t="
						+ seconds(expected.resetAfterNanos()));
			if (!expected.allowed()) {
				assertThat(result.getResponseHeaders().getFirst("Retry-After"))
					.isEqualTo(Long.toString(Math.max(1, seconds(expected.retryAfterNanos()))));
			}
			allowed += expected.allowed() ? 1 : 0;
		}
		assertThat(allowed).isEqualTo(expectedAllowed);
	}

	/** Holds the request, checks that it waits for the reference's delay, and releases it at once. */
	private ExchangeResult held(String path, Duration delay) throws Exception {
		CompletableFuture<ExchangeResult> result = CompletableFuture.supplyAsync(() -> get(path).returnResult());
		assertThat(this.scheduler.awaitPending(1, SimultaneousRequests.WAIT)).isTrue();
		assertThat(this.scheduler.pendingDelays()).containsExactly(delay);
		this.scheduler.runPendingNow();
		return result.get(SimultaneousRequests.WAIT.toSeconds(), TimeUnit.SECONDS);
	}

	/**
	 * The article's nginx test: ten simultaneous requests to limit_req rate=2r/s, without a burst, with burst=5,
	 * burst=5 nodelay and burst=5 delay=2.
	 */
	@ParameterizedTest(name = "{0}: {1} at once, then one each at {2} s, {3} rejected")
	@CsvSource(delimiter = '|', textBlock = """
			plain   | 1 | ''                  | 9
			burst   | 1 | 0.5 1.0 1.5 2.0 2.5 | 4
			nodelay | 6 | ''                  | 4
			delay   | 3 | 0.5 1.0 1.5         | 4
			yaml    | 3 | 0.5 1.0 1.5         | 4
			""")
	void shapesTenSimultaneousRequestsAsNginxDoes(String mode, int atOnce, String releases, int rejected)
			throws Exception {
		SimultaneousRequests requests = new SimultaneousRequests(this.port, this.scheduler);
		List<HttpResponse<String>> answered = requests.send("/demo/shaping/" + mode, 10);
		assertThat(answered).filteredOn((response) -> response.statusCode() == 200).hasSize(atOnce);
		assertThat(answered).filteredOn((response) -> response.statusCode() == 429)
			.hasSize(rejected)
			.allSatisfy((response) -> assertThat(response.headers().firstValue("Retry-After")).isPresent());
		List<Duration> slots = releases.isEmpty() ? List.of()
				: Arrays.stream(releases.split(" ")).map((second) -> Duration.parse("PT" + second + "S")).toList();
		assertThat(answered).hasSize(10 - slots.size());
		long start = this.time.nanoTime();
		assertThat(this.scheduler.pendingDelays()).isEqualTo(slots);
		for (int i = 0; i < slots.size(); i++) {
			// nothing is released before its slot, and each release lets exactly one request through
			assertThat(requests.noneAnswered()).isTrue();
			assertThat(this.scheduler.runNext()).isOne();
			assertThat(Duration.ofNanos(this.time.nanoTime() - start)).isEqualTo(slots.get(i));
			HttpResponse<String> released = requests.next();
			assertThat(released.statusCode()).isEqualTo(200);
			assertThat(released.body()).isEqualTo(mode + "\n");
			// r counts the places left in the queue when a request was admitted: they are released in that order
			String placesLeft = ";r=" + (slots.size() - 1 - i) + ";";
			assertThat(released.headers().firstValue("RateLimit"))
				.hasValueSatisfying((header) -> assertThat(header).contains(placesLeft));
		}
		assertThat(this.scheduler.pending()).isZero();
	}

	@Test
	void stackedLimitsAllApplyAndADeniedRequestTakesNothingFromTheOther() {
		for (int i = 0; i < 3; i++) {
			get("/demo/stacked").expectStatus().isOk();
		}
		get("/demo/stacked").expectStatus()
			.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectBody()
			.jsonPath("$.policies")
			.isEqualTo(List.of("stacked-per-second"));
		this.time.advance(Duration.ofSeconds(1));
		// 7 left per 10 s, plus the one returned in a second: the denied request took nothing
		get("/demo/stacked").expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("RateLimit-Policy", "\"stacked-per-second\";q=3;w=1, \"stacked-per-10s\";q=10;w=10")
			.expectHeader()
			.valueEquals("RateLimit", "\"stacked-per-second\";r=2;t=1, \"stacked-per-10s\";r=7;t=3");
		get("/demo/stacked").expectStatus().isOk();
		get("/demo/stacked").expectStatus().isOk();
		for (int second = 2; second <= 4; second++) {
			this.time.advance(Duration.ofSeconds(1));
			get("/demo/stacked").expectStatus().isOk();
			get("/demo/stacked").expectStatus().isOk();
			if (second < 4) {
				get("/demo/stacked").expectStatus().isOk();
			}
		}
		// 13 allowed in 4 seconds: the per-10s limit denies, although the per-second one would allow
		get("/demo/stacked").expectStatus()
			.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectBody()
			.jsonPath("$.policies")
			.isEqualTo(List.of("stacked-per-10s"));
	}

	@Test
	void limitsEachClientUnderACeilingForAllClientsTogether() {
		LoopbackClient first = new LoopbackClient("127.0.0.2", this.port);
		for (int i = 0; i < 5; i++) {
			assertThat(first.get("/demo/global").status()).as("request %d of 127.0.0.2", i).isEqualTo(200);
		}
		LoopbackClient.Response own = first.get("/demo/global");
		assertThat(own.status()).isEqualTo(429);
		assertThat(own.body()).contains("\"policies\":[\"global-per-client\"]");
		// the denied sixth request took nothing from the ceiling: 3 of 8 are left for everyone
		assertThat(own.header("RateLimit")).isEqualTo("\"global-per-client\";r=0;t=10, \"global-all-clients\";r=3;t=7");
		LoopbackClient second = new LoopbackClient("127.0.0.3", this.port);
		for (int i = 0; i < 3; i++) {
			assertThat(second.get("/demo/global").status()).as("request %d of 127.0.0.3", i).isEqualTo(200);
		}
		LoopbackClient third = new LoopbackClient("127.0.0.4", this.port);
		LoopbackClient.Response ceiling = third.get("/demo/global");
		assertThat(ceiling.status()).isEqualTo(429);
		assertThat(ceiling.body()).contains("\"policies\":[\"global-all-clients\"]");
		assertThat(ceiling.header("RateLimit")).isEqualTo("\"global-per-client\";r=5;t=0, \"global-all-clients\";r=0;t=10");
		// one emission interval of the ceiling later, 10 s / 8, the first client of all gets through
		this.time.advance(Duration.ofMillis(1250));
		assertThat(third.get("/demo/global").status()).isEqualTo(200);
		assertThat(first.get("/demo/global").status()).isEqualTo(429);
	}

	@Test
	void limitsTheFreeKeyToItsPlansThreeRequests() {
		LoopbackClient client = new LoopbackClient("127.0.0.2", this.port);
		for (int i = 0; i < 3; i++) {
			LoopbackClient.Response allowed = client.get("/demo/plan", "X-Api-Key", "free-key");
			assertThat(allowed.status()).isEqualTo(200);
			assertThat(allowed.header("RateLimit-Policy")).isEqualTo("\"plan:free\";q=3;w=10");
		}
		LoopbackClient.Response denied = client.get("/demo/plan", "X-Api-Key", "free-key");
		assertThat(denied.status()).isEqualTo(429);
		assertThat(denied.header("RateLimit-Policy")).isEqualTo("\"plan:free\";q=3;w=10");
		assertThat(denied.body()).contains("3 per 10 seconds (policy 'plan:free')");
	}

	@Test
	void limitsTheProKeyToItsPlansTenRequests() {
		LoopbackClient client = new LoopbackClient("127.0.0.2", this.port);
		for (int i = 0; i < 10; i++) {
			LoopbackClient.Response allowed = client.get("/demo/plan", "X-Api-Key", "pro-key");
			assertThat(allowed.status()).as("request %d", i + 1).isEqualTo(200);
			assertThat(allowed.header("RateLimit-Policy")).isEqualTo("\"plan:pro\";q=10;w=10");
		}
		LoopbackClient.Response denied = client.get("/demo/plan", "X-Api-Key", "pro-key");
		assertThat(denied.status()).isEqualTo(429);
		assertThat(denied.header("RateLimit-Policy")).isEqualTo("\"plan:pro\";q=10;w=10");
		assertThat(denied.body()).contains("10 per 10 seconds (policy 'plan:pro')");
		assertThat(client.get("/demo/plan", "X-Api-Key", "free-key").status()).isEqualTo(200);
	}

	@Test
	void refusesAClientThatWentOverForAMinute() {
		LoopbackClient client = new LoopbackClient("127.0.0.2", this.port);
		for (int i = 0; i < 3; i++) {
			assertThat(client.get("/demo/penalty").status()).isEqualTo(200);
		}
		LoopbackClient.Response over = client.get("/demo/penalty");
		assertThat(over.status()).isEqualTo(429);
		assertThat(over.header("Retry-After")).isEqualTo("60");
		// the quota is back ten seconds later, the client still refused for the rest of the minute
		this.time.advance(Duration.ofSeconds(10));
		LoopbackClient.Response later = client.get("/demo/penalty");
		assertThat(later.status()).isEqualTo(429);
		assertThat(later.header("Retry-After")).isEqualTo("50");
		assertThat(new LoopbackClient("127.0.0.3", this.port).get("/demo/penalty").status()).as("another client")
			.isEqualTo(200);
		this.time.advance(Duration.ofSeconds(50));
		assertThat(client.get("/demo/penalty").status()).isEqualTo(200);
	}

	@Test
	void refusesASixthRequestADayUntilMidnightInBerlin() {
		ZoneId berlin = ZoneId.of("Europe/Berlin");
		// an hour before a midnight in Berlin, whatever the shared clock stands at
		Instant midnight = this.time.instant().atZone(berlin).toLocalDate().plusDays(2).atStartOfDay(berlin)
			.toInstant();
		this.time.advance(Duration.between(this.time.instant(), midnight.minus(Duration.ofHours(1))));
		LoopbackClient client = new LoopbackClient("127.0.0.2", this.port);
		for (int i = 0; i < 5; i++) {
			assertThat(client.get("/demo/daily").status()).isEqualTo(200);
		}
		LoopbackClient.Response sixth = client.get("/demo/daily");
		assertThat(sixth.status()).isEqualTo(429);
		assertThat(sixth.header("Retry-After")).isEqualTo("3600");
		assertThat(sixth.header("RateLimit-Policy")).isEqualTo("\"daily\";q=5;w=86400");
		this.time.advance(Duration.ofMinutes(59));
		assertThat(client.get("/demo/daily").header("Retry-After")).isEqualTo("60");
		this.time.advance(Duration.ofMinutes(1));
		assertThat(client.get("/demo/daily").status()).as("a new day in Berlin").isEqualTo(200);
	}

	@Test
	void sharesOneQuotaAmongEveryKeyAnAddressInvents() {
		LoopbackClient client = new LoopbackClient("127.0.0.2", this.port);
		int allowed = 0;
		for (int i = 0; i < 30; i++) {
			LoopbackClient.Response response = client.get("/demo/plan", "X-Api-Key", "made-up-" + i);
			assertThat(response.header("RateLimit-Policy")).isEqualTo("\"plan\";q=3;w=10");
			allowed += (response.status() == 200) ? 1 : 0;
		}
		assertThat(allowed).as("a new made-up key each time buys nothing").isEqualTo(3);
		assertThat(new LoopbackClient("127.0.0.3", this.port).get("/demo/plan", "X-Api-Key", "made-up-0").status())
			.as("another address' quota").isEqualTo(200);
		assertThat(client.get("/demo/plan", "X-Api-Key", "free-key").status()).as("a key on its plan").isEqualTo(200);
	}

	@Test
	void putsEachAddressWithoutAKeyOnAFreeQuotaOfItsOwn() {
		LoopbackClient first = new LoopbackClient("127.0.0.2", this.port);
		LoopbackClient second = new LoopbackClient("127.0.0.3", this.port);
		for (int i = 0; i < 3; i++) {
			assertThat(first.get("/demo/plan").header("RateLimit-Policy")).isEqualTo("\"plan:free\";q=3;w=10");
		}
		assertThat(first.get("/demo/plan").status()).isEqualTo(429);
		// one permit every 3.33 seconds: full again 4, 7 and 10 seconds after the first three requests
		int[] full = { 4, 7, 10 };
		for (int i = 0; i < 3; i++) {
			LoopbackClient.Response allowed = second.get("/demo/plan");
			assertThat(allowed.status()).isEqualTo(200);
			assertThat(allowed.header("RateLimit")).isEqualTo("\"plan:free\";r=" + (2 - i) + ";t=" + full[i]);
		}
		assertThat(second.get("/demo/plan").status()).isEqualTo(429);
	}

	@Test
	void takesTheBatchSizeFromOneQuotaAndRejectsSizesItCanNeverTake() {
		get("/demo/batch?size=4").expectStatus().isOk().expectHeader().valueEquals("RateLimit", "\"batch\";r=6;t=4");
		get("/demo/batch?size=6").expectStatus().isOk().expectHeader().valueEquals("RateLimit", "\"batch\";r=0;t=10");
		get("/demo/batch?size=1").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		this.time.advance(Duration.ofSeconds(10));
		get("/demo/batch?size=11").expectStatus()
			.isBadRequest()
			.expectHeader()
			.doesNotExist("Retry-After")
			.expectHeader()
			.contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
			.expectBody()
			.json("""
					{"type": "about:blank", "title": "Bad Request", "status": 400,
					 "detail": "The cost of this request under policy 'batch' is 11, more than the 10 permits the policy can ever hold, so the request could never pass.",
					 "policies": ["batch"]}
					""");
		get("/demo/batch?size=0").expectStatus().isBadRequest();
		get("/demo/batch?size=two").expectStatus().isBadRequest();
		// none of the bad requests took anything
		get("/demo/batch?size=10").expectStatus().isOk();
	}

	@Test
	void limitsEachUserOnTheirOwnAndAnonymousRequestsByAddress() {
		for (int i = 0; i < 10; i++) {
			get("/demo/user", "alice", "alice-password").expectStatus().isOk();
		}
		get("/demo/user", "alice", "alice-password").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		get("/demo/user", "bob", "bob-password").expectStatus().isOk().expectBody(String.class).isEqualTo("hello bob\n");
		get("/demo/user").expectStatus().isOk().expectBody(String.class).isEqualTo("hello anonymous\n");
	}

	@Test
	void givesEachCustomerTheQuotaOfItsRecordAndFollowsAChangedRecord() {
		for (int i = 0; i < 5; i++) {
			get("/demo/customer", "alice", "alice-password").expectStatus()
				.isOk()
				.expectHeader()
				.valueEquals("RateLimit-Policy", "\"customer\";q=5;w=10");
		}
		get("/demo/customer", "alice", "alice-password").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		admin(HttpMethod.GET, "/actuator/ratelimit/customer/user:alice").expectStatus()
			.isOk()
			.expectBody()
			.json("""
					{"policy": "customer", "key": "user:alice", "limit": 5, "window": "PT10S", "remaining": 0}
					""");
		for (int i = 0; i < 2; i++) {
			get("/demo/customer", "bob", "bob-password").expectHeader()
				.valueEquals("RateLimit-Policy", "\"customer\";q=2;w=10");
		}
		get("/demo/customer", "bob", "bob-password").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		get("/demo/customer").expectHeader().valueEquals("RateLimit-Policy", "\"customer\";q=1;w=10");
		Quota bob = this.records.quota("bob").orElseThrow();
		try {
			this.records.update("bob", new Quota(3, Duration.ofSeconds(10)));
			this.time.advance(Duration.ofMinutes(1));
			for (int i = 0; i < 3; i++) {
				get("/demo/customer", "bob", "bob-password").expectStatus()
					.isOk()
					.expectHeader()
					.valueEquals("RateLimit-Policy", "\"customer\";q=3;w=10");
			}
			get("/demo/customer", "bob", "bob-password").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		}
		finally {
			this.records.update("bob", bob);
		}
	}

	@Test
	void holdsAtMostTwoReportsOfAClientInFlightAndTakesThemBackWhenTheyEnd() throws Exception {
		LoopbackClient client = new LoopbackClient("127.0.0.2", this.port);
		ExecutorService clients = Executors.newFixedThreadPool(3);
		try {
			List<Future<LoopbackClient.Response>> running = new ArrayList<>();
			for (int i = 0; i < 2; i++) {
				running.add(clients.submit(() -> client.get("/demo/concurrent")));
			}
			awaitInFlight(2);
			LoopbackClient.Response third = client.get("/demo/concurrent");
			assertThat(third.status()).isEqualTo(429);
			assertThat(third.header("Retry-After")).isEqualTo("1");
			assertThat(third.header("RateLimit-Policy")).isEqualTo("\"concurrent\";q=2;qu=\"concurrent-requests\"");
			assertThat(third.body()).contains("Too many requests in flight: 2 at once (policy 'concurrent')");
			LoopbackClient other = new LoopbackClient("127.0.0.3", this.port);
			running.add(clients.submit(() -> other.get("/demo/concurrent")));
			// another client's report runs beside them
			awaitInFlight(3);
			long deadline = System.nanoTime() + SimultaneousRequests.WAIT.toNanos();
			while (this.time.waits() < 3) {
				assertThat(System.nanoTime()).as("three reports under way in time").isLessThan(deadline);
				Thread.onSpinWait();
			}
			this.time.advance(Duration.ofSeconds(2));
			for (Future<LoopbackClient.Response> report : running) {
				assertThat(report.get(30, TimeUnit.SECONDS).status()).isEqualTo(200);
			}
			awaitInFlight(0);
		}
		finally {
			clients.shutdownNow();
		}
	}

	@Test
	void takesBackThePermitsOfReportsThatFailOrWhoseClientWentAway() throws Exception {
		LoopbackClient client = new LoopbackClient("127.0.0.2", this.port);
		ExecutorService clients = Executors.newFixedThreadPool(1);
		List<Socket> gone = new ArrayList<>();
		try {
			Future<LoopbackClient.Response> failing = clients.submit(() -> client.get("/demo/concurrent?fail=true"));
			Socket socket = new Socket(InetAddress.getByName("127.0.0.2"), this.port, null, 0);
			gone.add(socket);
			String request = "GET /demo/concurrent HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
			socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
			awaitInFlight(2);
			long deadline = System.nanoTime() + SimultaneousRequests.WAIT.toNanos();
			while (this.time.waits() < 2) {
				assertThat(System.nanoTime()).as("both reports under way in time").isLessThan(deadline);
				Thread.onSpinWait();
			}
			socket.close();
			this.time.advance(Duration.ofSeconds(2));
			assertThat(failing.get(30, TimeUnit.SECONDS).status()).isEqualTo(500);
			awaitInFlight(0);
		}
		finally {
			clients.shutdownNow();
			for (Socket socket : gone) {
				socket.close();
			}
		}
	}

	/** Waits, bounded, until this instance's requests hold {@code count} permits of the report in flight. */
	private void awaitInFlight(int count) {
		long deadline = System.nanoTime() + SimultaneousRequests.WAIT.toNanos();
		while (this.meters.find("ratelimit.in.flight").tag("policy", "concurrent").gauge() == null
				|| this.meters.get("ratelimit.in.flight").tag("policy", "concurrent").gauge().value() != count) {
			assertThat(System.nanoTime()).as("%d reports in flight in time", count).isLessThan(deadline);
			Thread.onSpinWait();
		}
	}

	@Test
	void neverRefusesTheRightPasswordForTheRequestsItHasInFlight() throws Exception {
		SimultaneousRequests requests = new SimultaneousRequests(this.port, this.scheduler);
		// held by the leaky bucket until their slots, the requests are in flight at once
		List<HttpResponse<String>> answered = requests.send("/demo/shaping/burst", 12,
				basic("alice", "alice-password"));
		assertThat(answered).noneSatisfy((response) -> assertThat(response.body()).contains("failed-logins"));
		while (this.scheduler.pending() > 0) {
			this.scheduler.runNext();
			assertThat(requests.next().statusCode()).isEqualTo(200);
		}
		LoopbackClient client = new LoopbackClient("127.0.0.1", this.port);
		assertThat(IntStream.range(0, 30)
			.parallel()
			.map((i) -> client.get("/demo/unlimited", basic("alice", "alice-password")).status())
			.filter((status) -> status != 200)
			.count()).as("30 right passwords at once").isZero();
	}

	@Test
	void countsTheWrongPasswordsOfRequestsInFlightAtMostOnceEach() {
		LoopbackClient guesser = new LoopbackClient("127.0.0.2", this.port);
		List<Integer> statuses = IntStream.range(0, 30)
			.parallel()
			.mapToObj((i) -> guesser.get("/demo/unlimited", basic("alice", "guess-" + i)).status())
			.toList();
		// each is refused once five have failed; those in flight meanwhile fail too, at most 29 more
		assertThat(statuses).filteredOn((status) -> status == 401).hasSizeBetween(5, 5 + 30 - 1);
		assertThat(statuses).allMatch((status) -> status == 401 || status == 429);
		assertThat(guesser.get("/demo/unlimited", basic("alice", "alice-password")).status()).isEqualTo(429);
	}

	@Test
	void refusesEvenTheRightPasswordAfterFiveWrongOnesUntilTheWindowPasses() {
		LoopbackClient guesser = new LoopbackClient("127.0.0.2", this.port);
		LoopbackClient neighbour = new LoopbackClient("127.0.0.3", this.port);
		for (int i = 0; i < 5; i++) {
			LoopbackClient.Response wrong = guesser.get("/demo/user", basic("alice", "guess-" + i));
			assertThat(wrong.status()).as("wrong password %d", i + 1).isEqualTo(401);
			assertThat(wrong.header("RateLimit")).isNull();
			this.time.advance(Duration.ofSeconds(1));
		}
		LoopbackClient.Response refused = guesser.get("/demo/user", basic("alice", "alice-password"));
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.header("Content-Type")).startsWith(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
		assertThat(refused.header("RateLimit-Policy")).isEqualTo("\"failed-logins\";q=5;w=60");
		assertThat(refused.header("RateLimit")).isEqualTo("\"failed-logins\";r=0;t=59");
		assertThat(refused.header("Retry-After")).isEqualTo("55");
		LoopbackClient.Response elsewhere = neighbour.get("/demo/user", basic("alice", "alice-password"));
		assertThat(elsewhere.status()).isEqualTo(200);
		assertThat(elsewhere.body()).isEqualTo("hello alice\n");
		this.time.advance(Duration.ofSeconds(55));
		LoopbackClient.Response again = guesser.get("/demo/user", basic("alice", "alice-password"));
		assertThat(again.status()).isEqualTo(200);
		assertThat(again.body()).isEqualTo("hello alice\n");
	}

	@Test
	void neverCountsSuccessfulLoginsTowardsTheFailedLoginLimit() {
		LoopbackClient client = new LoopbackClient("127.0.0.4", this.port);
		for (int i = 0; i < 8; i++) {
			assertThat(client.get("/demo/user", basic("bob", "bob-password")).status()).as("login %d", i + 1)
				.isEqualTo(200);
		}
		for (int i = 0; i < 5; i++) {
			assertThat(client.get("/demo/user", basic("bob", "wrong")).status()).as("wrong password %d", i + 1)
				.isEqualTo(401);
		}
		assertThat(client.get("/demo/user", basic("bob", "bob-password")).status()).isEqualTo(429);
	}

	@Test
	void limitsAnEndpointDeclaredOnlyInApplicationYml() {
		for (int i = 0; i < 3; i++) {
			get("/demo/yaml-only").expectStatus()
				.isOk()
				.expectHeader()
				.valueEquals("RateLimit-Policy", "\"yaml-only\";q=3;w=10");
		}
		get("/demo/yaml-only").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
	}

	@Test
	void countsHeadRequestsUnderTheRuleForGet() {
		// Spring MVC serves HEAD with the GET handler, so HEAD costs what GET costs
		for (int i = 0; i < 2; i++) {
			this.client.head()
				.uri("/demo/yaml-only")
				.exchange()
				.expectStatus()
				.isOk()
				.expectHeader()
				.valueEquals("RateLimit", "\"yaml-only\";r=" + (2 - i) + ";t=10");
		}
		get("/demo/yaml-only").expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("RateLimit", "\"yaml-only\";r=0;t=10");
		this.client.head().uri("/demo/yaml-only").exchange().expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
	}

	@Test
	void appliesTheOverrideFromApplicationYml() {
		for (int i = 0; i < 5; i++) {
			get("/demo/overridden").expectStatus()
				.isOk()
				.expectHeader()
				.valueEquals("RateLimit-Policy", "\"overridden\";q=5;w=60");
		}
		get("/demo/overridden").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
	}

	@Test
	void sharesTheClassLevelQuotaBetweenEndpoints() {
		for (int i = 0; i < 10; i++) {
			get((i % 2 == 0) ? "/demo/class/a" : "/demo/class/b").expectStatus().isOk();
		}
		get("/demo/class/a").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		get("/demo/class/b").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
	}

	@Test
	void spoofedForwardedForDoesNotBuyAFreshQuota() {
		for (int i = 0; i < 10; i++) {
			this.client.get()
				.uri("/demo/token-bucket")
				.header("X-Forwarded-For", "198.51.100." + i)
				.exchange()
				.expectStatus()
				.isOk();
		}
		this.client.get()
			.uri("/demo/token-bucket")
			.header("X-Forwarded-For", "203.0.113.77")
			.exchange()
			.expectStatus()
			.isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
	}

	@ParameterizedTest
	@CsvSource({ "/demo/service, service, 3", "/demo/service-async, service-async, 3", "/demo/code, partner-api, 2" })
	void limitsCallsBeyondTheControllerPerCustomer(String path, String policy, int limit) {
		for (int i = 0; i < limit; i++) {
			get(path + "?customer=acme").expectStatus().isOk();
		}
		get(path + "?customer=acme").expectStatus()
			.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader()
			.valueEquals("Retry-After", Long.toString(10 / limit + ((10 % limit == 0) ? 0 : 1)))
			.expectHeader()
			.valueEquals("RateLimit-Policy", "\"" + policy + "\";q=" + limit + ";w=10")
			.expectHeader()
			.contentType(MediaType.APPLICATION_PROBLEM_JSON)
			.expectBody()
			.jsonPath("$.policies[0]")
			.isEqualTo(policy);
		get(path + "?customer=initech").expectStatus().isOk();
	}

	@Test
	void leavesUnlimitedRequestsAlone() {
		this.client.get().uri("/nowhere").exchange().expectStatus().isNotFound().expectHeader().doesNotExist("RateLimit");
	}

	@Test
	void opensTheActuatorEndpointsToTheAdminAlone() {
		for (String endpoint : List.of("/actuator/ratelimit", "/actuator/health", "/actuator/metrics")) {
			get(endpoint).expectStatus().isUnauthorized();
			get(endpoint, "alice", "alice-password").expectStatus().isForbidden();
			get(endpoint, "admin", "wrong-password").expectStatus().isUnauthorized();
			get(endpoint, "admin", "admin-password").expectStatus().isOk();
		}
	}

	@Test
	void listsEveryPolicyWithWhereItComesFrom() {
		get("/actuator/ratelimit", "admin", "admin-password").expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.store.deciding")
			.isEqualTo(true)
			.jsonPath("$.store.failingFor")
			.doesNotExist()
			.jsonPath("$.policies['DemoController.gcra'].algorithm")
			.isEqualTo("GCRA")
			.jsonPath("$.policies['DemoController.gcra'].limit")
			.isEqualTo(10)
			.jsonPath("$.policies['DemoController.gcra'].window")
			.isEqualTo("PT10S")
			.jsonPath("$.policies['DemoController.gcra'].endpoints[0].routes[0]")
			.isEqualTo("GET,HEAD /demo/gcra")
			.jsonPath("$.policies['DemoController.gcra'].endpoints[0].key")
			.isEqualTo("ip")
			.jsonPath("$.policies['DemoController.gcra'].endpoints[0].mode")
			.isEqualTo("enforced")
			.jsonPath("$.policies['DemoController.gcra'].endpoints[0].declared")
			.value(String.class, (declared) -> assertThat(declared).contains("DemoController").contains("gcra"))
			.jsonPath("$.policies['DemoController.gcra'].change")
			.doesNotExist()
			.jsonPath("$.policies['yaml-only'].endpoints[0].declared")
			.value(String.class, (declared) -> assertThat(declared).contains("ratelimit.rules"))
			.jsonPath("$.policies['overridden'].limit")
			.isEqualTo(5);
	}

	@Test
	void inspectsAKeyWithoutTakingFromIt() {
		LoopbackClient client = new LoopbackClient("127.0.0.2", this.port);
		for (int i = 0; i < 3; i++) {
			assertThat(client.get("/demo/gcra").status()).isEqualTo(200);
		}
		for (int i = 0; i < 2; i++) {
			admin(HttpMethod.GET, "/actuator/ratelimit/DemoController.gcra/ip:127.0.0.2").expectStatus()
				.isOk()
				.expectBody()
				.json("""
						{"policy": "DemoController.gcra", "key": "ip:127.0.0.2", "allowed": true, "limit": 10,
						 "remaining": 7, "retryAfter": 0, "resetAfter": 3}
						""");
		}
		assertThat(client.get("/demo/gcra").header("RateLimit")).isEqualTo("\"DemoController.gcra\";r=6;t=4");
		admin(HttpMethod.GET, "/actuator/ratelimit/no-such-policy/ip:127.0.0.2").expectStatus().isNotFound();
	}

	@Test
	void resetsAKeyToItsFullQuota() {
		LoopbackClient client = new LoopbackClient("127.0.0.2", this.port);
		LoopbackClient other = new LoopbackClient("127.0.0.3", this.port);
		for (int i = 0; i < 10; i++) {
			client.get("/demo/gcra");
			other.get("/demo/gcra");
		}
		assertThat(client.get("/demo/gcra").status()).isEqualTo(429);
		admin(HttpMethod.DELETE, "/actuator/ratelimit/DemoController.gcra/ip:127.0.0.2").expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.remaining")
			.isEqualTo(10);
		LoopbackClient.Response allowed = client.get("/demo/gcra");
		assertThat(allowed.status()).isEqualTo(200);
		assertThat(allowed.header("RateLimit")).isEqualTo("\"DemoController.gcra\";r=9;t=1");
		assertThat(other.get("/demo/gcra").status()).as("another client").isEqualTo(429);
	}

	@Test
	void enforcesALoweredLimitFromTheNextRequestWithoutAFreshQuota() {
		LoopbackClient busy = new LoopbackClient("127.0.0.2", this.port);
		for (int i = 0; i < 5; i++) {
			assertThat(busy.get("/demo/gcra").status()).isEqualTo(200);
		}
		try {
			admin(HttpMethod.POST, "/actuator/ratelimit/DemoController.gcra", Map.of("limit", 2)).expectStatus()
				.isOk()
				.expectBody()
				.jsonPath("$.limit")
				.isEqualTo(2)
				.jsonPath("$.burst")
				.isEqualTo(2)
				.jsonPath("$.change.declaredLimit")
				.isEqualTo(10);
			assertThat(busy.get("/demo/gcra").status()).as("a client that used 5 of 10").isEqualTo(429);
			LoopbackClient fresh = new LoopbackClient("127.0.0.3", this.port);
			LoopbackClient.Response first = fresh.get("/demo/gcra");
			assertThat(first.status()).isEqualTo(200);
			assertThat(first.header("RateLimit-Policy")).isEqualTo("\"DemoController.gcra\";q=2;w=10");
			assertThat(fresh.get("/demo/gcra").status()).isEqualTo(200);
			assertThat(fresh.get("/demo/gcra").status()).isEqualTo(429);
		}
		finally {
			admin(HttpMethod.DELETE, "/actuator/ratelimit/DemoController.gcra").expectStatus()
				.isOk()
				.expectBody()
				.jsonPath("$.limit")
				.isEqualTo(10)
				.jsonPath("$.change")
				.doesNotExist();
		}
		LoopbackClient.Response declared = new LoopbackClient("127.0.0.4", this.port).get("/demo/gcra");
		assertThat(declared.header("RateLimit-Policy")).isEqualTo("\"DemoController.gcra\";q=10;w=10");
	}

	@Test
	void refusesAChangeItCannotTakeAndChangesNothing() {
		admin(HttpMethod.POST, "/actuator/ratelimit/DemoController.gcra", Map.of("limit", 0)).expectStatus()
			.isBadRequest()
			.expectBody(String.class)
			.value((body) -> assertThat(body).contains("limit of policy 'DemoController.gcra' must be at least 1"));
		admin(HttpMethod.POST, "/actuator/ratelimit/DemoController.gcra", Map.of("window", "soon")).expectStatus()
			.isBadRequest()
			.expectBody(String.class)
			.value((body) -> assertThat(body).contains("window").contains("'soon' is not a duration"));
		admin(HttpMethod.POST, "/actuator/ratelimit/yaml-only", Map.of("burst", 5)).expectStatus()
			.isBadRequest()
			.expectBody(String.class)
			.value((body) -> assertThat(body).contains("has no burst"));
		admin(HttpMethod.POST, "/actuator/ratelimit/DemoController.gcra", Map.of()).expectStatus().isBadRequest();
		// an operator's typo is refused, never read as if it were right
		admin(HttpMethod.POST, "/actuator/ratelimit/DemoController.gcra", "{\"limit\":\"5\"}").expectStatus()
			.isBadRequest()
			.expectBody(String.class)
			.value((body) -> assertThat(body).contains("limit must be a JSON number"));
		admin(HttpMethod.POST, "/actuator/ratelimit/DemoController.gcra", "{\"limit\":5,\"limit\":6}").expectStatus()
			.isBadRequest()
			.expectBody(String.class)
			.value((body) -> assertThat(body).contains("limit is given more than once"));
		admin(HttpMethod.POST, "/actuator/ratelimit/DemoController.gcra", "{\"window\":10}").expectStatus()
			.isBadRequest()
			.expectBody(String.class)
			.value((body) -> assertThat(body).contains("window must be a JSON string"));
		admin(HttpMethod.POST, "/actuator/ratelimit/no-such-policy", Map.of("limit", 2)).expectStatus()
			.isNotFound()
			.expectBody(String.class)
			.value((body) -> assertThat(body).contains("No rate limit policy is named 'no-such-policy'"));
		admin(HttpMethod.GET, "/actuator/ratelimit/DemoController.gcra").expectBody()
			.jsonPath("$.limit")
			.isEqualTo(10)
			.jsonPath("$.change")
			.doesNotExist();
		LoopbackClient client = new LoopbackClient("127.0.0.2", this.port);
		for (int i = 0; i < 10; i++) {
			assertThat(client.get("/demo/gcra").status()).isEqualTo(200);
		}
		assertThat(client.get("/demo/gcra").status()).isEqualTo(429);
	}

	@ParameterizedTest
	@CsvSource({ "ShapingController.noDelay, burst, 3, 3, 3, 2", "ShapingController.delay, burst, 1, 1, 1, 2",
			"ShapingController.plain, limit, 4, 1, 0, 4" })
	void keepsWhatADeclarationMeantWhenAChangeNamesSomeValues(String policy, String value, long to, long burst,
			long delayAfter, long limit) {
		try {
			admin(HttpMethod.POST, "/actuator/ratelimit/" + policy, Map.of(value, to)).expectStatus()
				.isOk()
				.expectBody()
				.jsonPath("$.limit")
				.isEqualTo(limit)
				.jsonPath("$.burst")
				.isEqualTo(burst)
				.jsonPath("$.delayAfter")
				.isEqualTo(delayAfter);
		}
		finally {
			admin(HttpMethod.DELETE, "/actuator/ratelimit/" + policy).expectStatus().isOk();
		}
	}

	private RestTestClient.ResponseSpec admin(HttpMethod method, String path) {
		return this.client.method(method)
			.uri(path)
			.headers((headers) -> headers.setBasicAuth("admin", "admin-password"))
			.exchange();
	}

	/** An admin's request with a JSON body: a map, or the JSON as written. */
	private RestTestClient.ResponseSpec admin(HttpMethod method, String path, Object body) {
		return this.client.method(method)
			.uri(path)
			.headers((headers) -> headers.setBasicAuth("admin", "admin-password"))
			.contentType(MediaType.APPLICATION_JSON)
			.body(body)
			.exchange();
	}

	private RestTestClient.ResponseSpec get(String path) {
		return this.client.get().uri(path).exchange();
	}

	private RestTestClient.ResponseSpec get(String path, String user, String password) {
		return this.client.get().uri(path).headers((headers) -> headers.setBasicAuth(user, password)).exchange();
	}

	private static String[] basic(String user, String password) {
		return new String[] { "Authorization", "Basic " + Base64.getEncoder()
			.encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)) };
	}

	private static long seconds(long nanos) {
		return (nanos + 999_999_999L) / 1_000_000_000L;
	}

	private static List<Double> scenarioB() {
		List<Double> times = new ArrayList<>();
		for (int i = 0; i < 16; i++) {
			times.add(i * 0.5);
		}
		for (int i = 0; i < 10; i++) {
			times.add(9.9);
		}
		for (int i = 0; i < 10; i++) {
			times.add(10.1);
		}
		for (int i = 0; i < 10; i++) {
			times.add(15 + i * 0.5);
		}
		return times;
	}

	/** What ratelimit.near.limit counted so far for the policy, across the tests sharing this application. */
	private double nearLimit(String policy) {
		Counter counter = this.meters.find("ratelimit.near.limit").tags("policy", policy, "plan", "default").counter();
		return (counter != null) ? counter.count() : 0;
	}

}
