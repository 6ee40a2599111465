package dev.ratelimit.spring.autoconfigure;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.core.testing.LogRecorder;
import dev.ratelimit.spring.KeyResolver;
import dev.ratelimit.spring.RateLimitExceededHandler;
import dev.ratelimit.spring.webmvc.RateLimitWebMvcAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.test.web.servlet.assertj.MockMvcTester;
import org.springframework.test.web.servlet.assertj.MvcTestResult;
import org.springframework.test.web.servlet.request.RequestPostProcessor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests of the interceptor through Spring MVC, with time moved by hand.
 */
class RateLimitInterceptorTests {

	private final ManualTimeSource time = new ManualTimeSource();

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitWebMvcAutoConfiguration.class, WebMvcAutoConfiguration.class,
				HttpMessageConvertersAutoConfiguration.class, JacksonAutoConfiguration.class))
		.withBean(ManualTimeSource.class, () -> this.time)
		.withBean("apiKeyResolver", KeyResolver.class, () -> (request) -> request.getHeader("X-Key"))
		.withUserConfiguration(TestControllers.LimitedController.class, TestControllers.ClassLevelController.class);

	@Test
	void rejectsEleventhRequestWith429() {
		run((mvc) -> {
			for (int i = 0; i < 10; i++) {
				assertThat(mvc.get().uri("/gcra")).hasStatusOk()
					.headers()
					.hasValue("RateLimit-Policy", "\"LimitedController.gcra\";q=10;w=10")
					.hasValue("RateLimit", "\"LimitedController.gcra\";r=" + (9 - i) + ";t=" + (i + 1));
			}
			MvcTestResult rejected = mvc.get().uri("/gcra").exchange();
			assertThat(rejected).hasStatus(HttpStatus.TOO_MANY_REQUESTS)
				.hasContentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
				.headers()
				.hasValue("Retry-After", "1")
				.hasValue("RateLimit-Policy", "\"LimitedController.gcra\";q=10;w=10")
				.hasValue("RateLimit", "\"LimitedController.gcra\";r=0;t=10");
			assertThat(rejected).bodyJson()
				.isLenientlyEqualTo("""
						{"type": "about:blank", "title": "Too Many Requests", "status": 429,
						 "detail": "Rate limit exceeded: 10 per 10 seconds (policy 'LimitedController.gcra'); retry in 1 second.",
						 "policies": ["LimitedController.gcra"]}
						""");
			this.time.advance(Duration.ofMillis(1000));
			assertThat(mvc.get().uri("/gcra")).hasStatusOk();
		});
	}

	@Test
	void roundsRetryAfterUpToWholeSeconds() {
		run((mvc) -> {
			mvc.get().uri("/fixed").exchange();
			mvc.get().uri("/fixed").exchange();
			this.time.advance(Duration.ofMillis(8_500));
			assertThat(mvc.get().uri("/fixed")).hasStatus(HttpStatus.TOO_MANY_REQUESTS)
				.headers()
				.hasValue("Retry-After", "2")
				.hasValue("RateLimit", "\"fixed\";r=0;t=2");
		});
	}

	@Test
	void leavesUnlimitedEndpointsAlone() {
		run((mvc) -> {
			for (int i = 0; i < 20; i++) {
				assertThat(mvc.get().uri("/free")).hasStatusOk().headers().doesNotContainHeader("RateLimit");
			}
		});
	}

	@Test
	void stackedLimitsAllApplyAndADeniedRequestTakesNothing() {
		run((mvc) -> {
			assertThat(mvc.get().uri("/stacked")).hasStatusOk()
				.headers()
				.hasValue("RateLimit-Policy", "\"per-second\";q=2;w=1, \"per-minute\";q=3;w=60");
			assertThat(mvc.get().uri("/stacked")).hasStatusOk();
			MvcTestResult denied = mvc.get().uri("/stacked").exchange();
			assertThat(denied).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(denied).bodyJson().extractingPath("$.policies").asArray().containsExactly("per-second");
			// the per-second denial took nothing from the per-minute quota: one request is left
			this.time.advance(Duration.ofSeconds(1));
			assertThat(mvc.get().uri("/stacked")).hasStatusOk();
			this.time.advance(Duration.ofSeconds(1));
			MvcTestResult minute = mvc.get().uri("/stacked").exchange();
			assertThat(minute).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(minute).bodyJson().extractingPath("$.policies").asArray().containsExactly("per-minute");
		});
	}

	@Test
	void classLevelLimitIsOneQuotaForAllMethodsAndAMethodsOwnWins() {
		run((mvc) -> {
			assertThat(mvc.get().uri("/class/a")).hasStatusOk()
				.headers()
				.hasValue("RateLimit-Policy", "\"ClassLevelController\";q=2;w=10");
			assertThat(mvc.get().uri("/class/b")).hasStatusOk();
			assertThat(mvc.get().uri("/class/a")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(mvc.get().uri("/class/own")).hasStatusOk()
				.headers()
				.hasValue("RateLimit-Policy", "\"own\";q=5;w=10");
		});
	}

	@Test
	void stacksEachClientsLimitUnderOneThatEveryClientShares() {
		run((mvc) -> {
			assertThat(mvc.get().uri("/global").with(from("10.0.0.2"))).hasStatusOk()
				.headers()
				.hasValue("RateLimit", "\"per-client\";r=1;t=5, \"everyone\";r=2;t=4");
			assertThat(mvc.get().uri("/global").with(from("10.0.0.2"))).hasStatusOk();
			MvcTestResult own = mvc.get().uri("/global").with(from("10.0.0.2")).exchange();
			assertThat(own).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(own).bodyJson().extractingPath("$.policies").asArray().containsExactly("per-client");
			assertThat(own).headers().hasValue("RateLimit", "\"per-client\";r=0;t=10, \"everyone\";r=1;t=7");
			// the denied request took nothing from the shared quota: one request is left for everyone
			assertThat(mvc.get().uri("/global").with(from("10.0.0.3"))).hasStatusOk();
			MvcTestResult shared = mvc.get().uri("/global").with(from("10.0.0.4")).exchange();
			assertThat(shared).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(shared).bodyJson().extractingPath("$.policies").asArray().containsExactly("everyone");
			assertThat(shared).headers().hasValue("RateLimit", "\"per-client\";r=2;t=0, \"everyone\";r=0;t=10");
		});
	}

	@Test
	void keysByUserAndFallsBackToAddressWhenAnonymous() {
		run((mvc) -> {
			assertThat(mvc.get().uri("/user").principal(() -> "alice")).hasStatusOk();
			assertThat(mvc.get().uri("/user").principal(() -> "alice")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(mvc.get().uri("/user").principal(() -> "bob")).hasStatusOk();
			assertThat(mvc.get().uri("/user")).hasStatusOk();
			assertThat(mvc.get().uri("/user")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(mvc.get().uri("/user").with(from("10.0.0.2"))).hasStatusOk();
		});
	}

	@Test
	void keysByHeader() {
		run((mvc) -> {
			assertThat(mvc.get().uri("/header").header("X-Api-Key", "a")).hasStatusOk();
			assertThat(mvc.get().uri("/header").header("X-Api-Key", "a")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(mvc.get().uri("/header").header("X-Api-Key", "b")).hasStatusOk();
		});
	}

	@Test
	void keysByExpressionOverPathVariablesAndRequestParameters() {
		run((mvc) -> {
			assertThat(mvc.get().uri("/tenants/acme")).hasStatusOk();
			assertThat(mvc.get().uri("/tenants/acme")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(mvc.get().uri("/tenants/acme?region=us")).hasStatusOk();
			assertThat(mvc.get().uri("/tenants/globex")).hasStatusOk();
		});
	}

	@Test
	void keysByResolverBean() {
		run((mvc) -> {
			assertThat(mvc.get().uri("/resolved").header("X-Key", "k1")).hasStatusOk();
			assertThat(mvc.get().uri("/resolved").header("X-Key", "k1")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(mvc.get().uri("/resolved").header("X-Key", "k2")).hasStatusOk();
		});
	}

	@Test
	void neverTrustsForwardedForByDefault() {
		run((mvc) -> {
			assertThat(mvc.get().uri("/user")).hasStatusOk();
			assertThat(mvc.get().uri("/user").header("X-Forwarded-For", "203.0.113.9"))
				.hasStatus(HttpStatus.TOO_MANY_REQUESTS);
		});
	}

	@Test
	void spellsEachIpv6AddressOneWay() {
		run((mvc) -> {
			assertThat(mvc.get().uri("/user").with(from("2001:DB8:0:0:0:0:0:1"))).hasStatusOk();
			assertThat(mvc.get().uri("/user").with(from("2001:db8::1"))).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(mvc.get().uri("/user").with(from("10.1.2.3"))).hasStatusOk();
			assertThat(mvc.get().uri("/user").with(from("::ffff:10.1.2.3"))).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
		});
	}

	@Test
	void decidesAnAsynchronousRequestOnce() {
		run((mvc) -> {
			assertThat(mvc.get().uri("/async")).hasStatusOk().hasBodyTextEqualTo("ok");
			assertThat(mvc.get().uri("/async")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
		});
	}

	@Test
	void addsLegacyHeadersWhenAsked() {
		this.runner.withPropertyValues("ratelimit.headers.legacy=true").run((context) -> {
			MockMvcTester mvc = MockMvcTester.from(context);
			assertThat(mvc.get().uri("/stacked")).hasStatusOk()
				.headers()
				.hasValue("X-RateLimit-Limit", "2")
				.hasValue("X-RateLimit-Remaining", "1")
				.hasValue("X-RateLimit-Reset", "1");
		});
	}

	@Test
	void omitsLegacyHeadersByDefault() {
		run((mvc) -> assertThat(mvc.get().uri("/gcra")).headers().doesNotContainHeader("X-RateLimit-Limit"));
	}

	@Test
	void usesTheApplicationsExceededHandler() {
		this.runner.withBean(RateLimitExceededHandler.class, () -> (request, rejection) -> {
			ProblemDetail problem = rejection.toProblemDetail();
			problem.setProperty("path", request.getRequestURI());
			return problem;
		}).run((context) -> {
			MockMvcTester mvc = MockMvcTester.from(context);
			mvc.get().uri("/user").exchange();
			MvcTestResult rejected = mvc.get().uri("/user").exchange();
			assertThat(rejected).hasStatus(HttpStatus.TOO_MANY_REQUESTS).headers().hasValue("Retry-After", "10");
			assertThat(rejected).bodyJson().extractingPath("$.path").isEqualTo("/user");
		});
	}

	@Test
	void countsTheAdmittedRequestsThatLeaveFewerThanAShareOfTheLimit() {
		this.runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run((context) -> {
			MockMvcTester mvc = MockMvcTester.from(context);
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			for (int i = 0; i < 8; i++) {
				assertThat(mvc.get().uri("/gcra")).hasStatusOk();
			}
			assertThat(registry.find("ratelimit.near.limit").counter()).as("2 left of 10 is not below 20%").isNull();
			assertThat(mvc.get().uri("/gcra")).hasStatusOk();
			assertThat(mvc.get().uri("/gcra")).hasStatusOk();
			assertThat(mvc.get().uri("/gcra")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(registry.get("ratelimit.near.limit")
				.tags("policy", "LimitedController.gcra", "plan", "default")
				.counter()
				.count()).isEqualTo(2);
		});
	}

	@Test
	void countsNearTheLimitBelowTheConfiguredShare() {
		this.runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.withPropertyValues("ratelimit.near-limit-share=0.7")
			.run((context) -> {
				MockMvcTester mvc = MockMvcTester.from(context);
				for (int i = 0; i < 10; i++) {
					assertThat(mvc.get().uri("/gcra")).hasStatusOk();
				}
				// 6 to 0 left are below 70% of 10; 7 is not
				assertThat(context.getBean(MeterRegistry.class).get("ratelimit.near.limit").counter().count())
					.isEqualTo(7);
			});
	}

	@Test
	void countsDecisionsByPolicyAndOutcome() {
		this.runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run((context) -> {
			MockMvcTester mvc = MockMvcTester.from(context);
			mvc.get().uri("/user").exchange();
			mvc.get().uri("/user").exchange();
			mvc.get().uri("/user").exchange();
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			assertThat(registry.get("ratelimit.decisions")
				.tags("policy", "LimitedController.user", "outcome", "allowed")
				.counter()
				.count()).isEqualTo(1);
			assertThat(registry.get("ratelimit.decisions")
				.tags("policy", "LimitedController.user", "outcome", "rejected")
				.counter()
				.count()).isEqualTo(2);
			assertThat(registry.get("ratelimit.decision.latency").tags("store", "memory").timer().count())
				.isEqualTo(3);
			assertThat(registry.getMeters()).allSatisfy((meter) -> assertThat(meter.getId().getTag("key")).isNull());
		});
	}

	@Test
	void limitsUnannotatedRequestsByTheFirstRuleTheyMatch() {
		this.runner
			.withPropertyValues("ratelimit.rules[0].path=/free", "ratelimit.rules[0].methods=POST",
					"ratelimit.rules[0].limit=1", "ratelimit.rules[0].window=10s", "ratelimit.rules[1].path=/f*",
					"ratelimit.rules[1].limit=2", "ratelimit.rules[1].window=10s", "ratelimit.rules[1].name=f-star",
					"ratelimit.rules[2].path=/**", "ratelimit.rules[2].limit=1", "ratelimit.rules[2].window=10s")
			.run((context) -> {
				MockMvcTester mvc = MockMvcTester.from(context);
				assertThat(mvc.get().uri("/free")).hasStatusOk()
					.headers()
					.hasValue("RateLimit-Policy", "\"f-star\";q=2;w=10");
				assertThat(mvc.get().uri("/free")).hasStatusOk();
				assertThat(mvc.get().uri("/free")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
				// an annotated handler takes its own limits, never a rule's
				assertThat(mvc.get().uri("/gcra")).hasStatusOk()
					.headers()
					.hasValue("RateLimit-Policy", "\"LimitedController.gcra\";q=10;w=10");
				assertThat(mvc.get().uri("/gcra")).hasStatusOk();
			});
	}

	@Test
	void neverLimitsCorsPreFlightRequests() {
		this.runner
			.withPropertyValues("ratelimit.rules[0].path=/free", "ratelimit.rules[0].limit=1",
					"ratelimit.rules[0].window=10s")
			.run((context) -> {
				MockMvcTester mvc = MockMvcTester.from(context);
				for (int i = 0; i < 3; i++) {
					assertThat(mvc.options()
						.uri("/free")
						.header("Origin", "https://example.com")
						.header("Access-Control-Request-Method", "GET")).headers().doesNotContainHeader("RateLimit");
				}
				assertThat(mvc.get().uri("/free")).hasStatusOk();
			});
	}

	@Test
	void keysRulesByThePatternsVariables() {
		this.runner
			.withPropertyValues("ratelimit.rules[0].path=/items/{item}", "ratelimit.rules[0].limit=1",
					"ratelimit.rules[0].window=10s", "ratelimit.rules[0].key=spel:#item")
			.run((context) -> {
				MockMvcTester mvc = MockMvcTester.from(context);
				assertThat(mvc.get().uri("/items/1")).hasStatusOk();
				assertThat(mvc.get().uri("/items/1")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
				assertThat(mvc.get().uri("/items/2")).hasStatusOk();
			});
	}

	@Test
	void overridesDeclarationsByName() {
		this.runner
			.withPropertyValues("ratelimit.policies.fixed.limit=1", "ratelimit.policies.[LimitedController.gcra].limit=2",
					"ratelimit.policies.[LimitedController.gcra].key=header:X-Api-Key")
			.run((context) -> {
				MockMvcTester mvc = MockMvcTester.from(context);
				assertThat(mvc.get().uri("/fixed")).hasStatusOk();
				assertThat(mvc.get().uri("/fixed")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
				assertThat(mvc.get().uri("/gcra").header("X-Api-Key", "a")).hasStatusOk()
					.headers()
					.hasValue("RateLimit-Policy", "\"LimitedController.gcra\";q=2;w=10");
				assertThat(mvc.get().uri("/gcra").header("X-Api-Key", "a")).hasStatusOk();
				assertThat(mvc.get().uri("/gcra").header("X-Api-Key", "a")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
				assertThat(mvc.get().uri("/gcra").header("X-Api-Key", "b")).hasStatusOk();
			});
	}

	@Test
	void usesTheConfiguredDefaultAlgorithm() {
		this.runner.withPropertyValues("ratelimit.default-algorithm=fixed-window").run((context) -> {
			MockMvcTester mvc = MockMvcTester.from(context);
			for (int i = 0; i < 10; i++) {
				assertThat(mvc.get().uri("/gcra")).hasStatusOk();
			}
			// a GCRA would have one permit back after a second; a fixed window waits for its end
			this.time.advance(Duration.ofSeconds(1));
			assertThat(mvc.get().uri("/gcra")).hasStatus(HttpStatus.TOO_MANY_REQUESTS)
				.headers()
				.hasValue("Retry-After", "9");
		});
	}

	@Test
	void warmsUpARedisStoreWithTheScriptOfEveryLimitedEndpointAtStartup() {
		List<List<String>> calls = new CopyOnWriteArrayList<>();
		RedisRateLimitStore store = RedisRateLimitStore.builder((sha1, script, keys, args) -> {
			calls.add(keys);
			return CompletableFuture.completedFuture(List.of());
		}).build();
		this.runner.withBean(RateLimitStore.class, () -> store).run((context) -> {
			assertThat(context).hasNotFailed();
			// one call per script: GCRA, FIXED_WINDOW and the stacked script, for one of the stacks of two policies
			assertThat(calls).filteredOn((keys) -> !keys.get(0).startsWith("ratelimit:{%fleet}:"))
				.hasSize(3)
				.contains(List.of("ratelimit:{%warm-up}:fixed"))
				.anySatisfy((keys) -> assertThat(keys).hasSize(2).allMatch((key) -> key.startsWith("ratelimit:{%warm-up}:")));
			// the first heartbeat, so that the instance knows its fleet before the first request, and a read of the
			// runtime changes the fleet shares
			assertThat(calls).contains(List.of("ratelimit:{%fleet}:members", "ratelimit:{%fleet}:control"),
					List.of("ratelimit:{%fleet}:control"));
		});
	}

	@Test
	void appliesTheFailurePolicyAndCountsItWhenRedisIsDown() throws IOException {
		int closedPort;
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			closedPort = socket.getLocalPort();
		}
		// from the start: a heartbeat may find Redis failing before the first request does
		try (LogRecorder log = LogRecorder.record(RedisRateLimitStore.class.getName())) {
			this.runner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
				.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
				.withPropertyValues("ratelimit.store=redis", "ratelimit.redis.failure-policy=deny",
						"spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + closedPort)
				.run((context) -> {
					MockMvcTester mvc = MockMvcTester.from(context);
					assertThat(mvc.get().uri("/gcra")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
					// written off the request thread: that Redis is failing, and the decision it did not make
					await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(log.lines()).isEqualTo(2));
					assertThat(log.messages())
						.allSatisfy((message) -> assertThat(message).contains("the DENY failure policy"));
					MeterRegistry registry = context.getBean(MeterRegistry.class);
					assertThat(registry.get("ratelimit.decisions")
						.tags("policy", "LimitedController.gcra", "outcome", "store_failure")
						.counter()
						.count()).isEqualTo(1);
					assertThat(registry.get("ratelimit.decision.latency").tags("store", "redis").timer().count())
						.isEqualTo(1);
				});
		}
	}

	@Test
	void logsAndCountsAGiveBackThatRedisDidNotCarryOut() throws IOException {
		int closedPort;
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			closedPort = socket.getLocalPort();
		}
		this.runner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.withPropertyValues("ratelimit.store=redis", "spring.data.redis.host=127.0.0.1",
					"spring.data.redis.port=" + closedPort)
			.run((context) -> {
				RateLimitStore store = context.getBean(RateLimitStore.class);
				RateLimitPolicy policy = RateLimitPolicy.of("logins", Algorithm.GCRA, 5, Duration.ofMinutes(1));
				// a decision that Redis took, as far as the store can tell
				Decision taken = new Decision(true, 5, 4, 0, 12_000_000_000L, 0, 1_000_000);
				try (LogRecorder log = LogRecorder.record(RedisRateLimitStore.class.getName())) {
					for (int i = 0; i < 3; i++) {
						store.giveBack(List.of(new KeyedPolicy("client", policy)), List.of(taken));
					}
					await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(log.lines()).isEqualTo(1));
					assertThat(log.messages()).singleElement()
						.asString()
						.startsWith("Redis did not take back the permits of 1 request since the last report");
				}
				assertThat(context.getBean(MeterRegistry.class)
					.get("ratelimit.decisions")
					.tags("policy", "logins", "outcome", "give_back_failure")
					.counter()
					.count()).isEqualTo(3);
			});
	}

	private void run(Consumer<MockMvcTester> test) {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			test.accept(MockMvcTester.from(context));
		});
	}

	private static RequestPostProcessor from(String address) {
		return (request) -> {
			request.setRemoteAddr(address);
			return request;
		};
	}


}
