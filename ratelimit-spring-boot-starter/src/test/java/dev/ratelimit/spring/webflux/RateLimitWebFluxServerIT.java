package dev.ratelimit.spring.webflux;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import dev.ratelimit.core.testing.BlockingCallsFail;
import dev.ratelimit.core.testing.RedisExtension;
import dev.ratelimit.core.testing.TestRedis;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.TestApplication;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.reactive.handler.SimpleUrlHandlerMapping;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebHandler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Tests rate limiting of a WebFlux application on a real Reactor Netty server, in memory and on a real Redis,
 * with BlockHound failing any blocking call on a non-blocking thread: annotated handlers and functional
 * endpoints are limited as on Spring MVC, with the same headers, {@code Retry-After} and problem body; a rule
 * marked {@code before-security} limits what a filter ahead of the handlers answers itself; and a reactive key
 * resolver keys each client on its own.
 */
@ExtendWith({ BlockingCallsFail.class, RedisExtension.class })
class RateLimitWebFluxServerIT {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private final HttpClient http = HttpClient.newHttpClient();

	private TestRedis redis;

	@BeforeEach
	void useRedis(TestRedis redis) {
		this.redis = redis;
	}

	@ParameterizedTest
	@ValueSource(strings = { "memory", "redis" })
	void limitsAnAnnotatedHandlerWithTheHeadersAndProblemOfSpringMvc(String store) throws Exception {
		try (ConfigurableApplicationContext context = start(store)) {
			int port = port(context);
			for (int i = 0; i < 3; i++) {
				HttpResponse<String> allowed = get(port, "/limited", null);
				assertThat(allowed.statusCode()).isEqualTo(200);
				assertThat(allowed.body()).isEqualTo("limited");
				assertThat(allowed.headers().firstValue("RateLimit-Policy")).hasValue("\"limited\";q=3;w=3600");
				assertThat(allowed.headers().firstValue("RateLimit"))
					.hasValue("\"limited\";r=" + (2 - i) + ";t=" + (i + 1) * 1200);
			}
			HttpResponse<String> rejected = get(port, "/limited", null);
			assertThat(rejected.statusCode()).isEqualTo(429);
			assertThat(rejected.headers().firstValue("Retry-After")).hasValue("1200");
			assertThat(rejected.headers().firstValue("Content-Type")).hasValue("application/problem+json");
			JsonNode problem = JSON.readTree(rejected.body());
			assertThat(problem.at("/status").asInt()).isEqualTo(429);
			assertThat(problem.at("/title").asString()).isEqualTo("Too Many Requests");
			assertThat(problem.at("/policies/0").asString()).isEqualTo("limited");
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "memory", "redis" })
	void keysEachUserOnTheirOwnAndAsksForThePrincipalOnlyWhenALimitReadsIt(String store) throws Exception {
		try (ConfigurableApplicationContext context = start(store)) {
			int port = port(context);
			AtomicInteger asked = context.getBean(App.class).principalsAsked;
			assertThat(get(port, "/user", null, "alice").statusCode()).isEqualTo(200);
			assertThat(get(port, "/user", null, "alice").statusCode()).isEqualTo(429);
			assertThat(get(port, "/user", null, "bob").statusCode()).isEqualTo(200);
			assertThat(asked).hasValue(3);
			for (int i = 0; i < 3; i++) {
				assertThat(get(port, "/limited", null, "alice").statusCode()).isEqualTo(200);
			}
			// keyed by address: the principal, which may cost a session look-up, is never asked for
			assertThat(asked).hasValue(3);
		}
	}

	@Test
	void answersEveryRequestThatRedisDecidesOnItsClientsThread() throws Exception {
		// without local denials every decision, rejections included, completes on the Redis client's thread
		try (ConfigurableApplicationContext context = start("redis", "--ratelimit.redis.local-denials=false")) {
			int port = port(context);
			for (int i = 0; i < 300; i++) {
				assertThat(get(port, "/limited", null).statusCode()).as("request %d", i).isEqualTo((i < 3) ? 200 : 429);
			}
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "memory", "redis" })
	void limitsFunctionalEndpointsAndPlainWebHandlersByRule(String store) throws Exception {
		try (ConfigurableApplicationContext context = start(store, "--ratelimit.rules[0].path=/fn/**",
				"--ratelimit.rules[0].limit=2", "--ratelimit.rules[0].window=1m", "--ratelimit.rules[0].name=fn",
				"--ratelimit.rules[1].path=/handler/**", "--ratelimit.rules[1].limit=1",
				"--ratelimit.rules[1].window=1m", "--ratelimit.rules[1].name=handler")) {
			int port = port(context);
			List<Integer> statuses = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				statuses.add(get(port, "/fn/hello", null).statusCode());
			}
			assertThat(statuses).containsExactly(200, 200, 429, 429);
			HttpResponse<String> handled = get(port, "/handler/any", null);
			assertThat(handled.body()).isEqualTo("handler");
			assertThat(handled.headers().firstValue("RateLimit-Policy")).hasValue("\"handler\";q=1;w=60");
			assertThat(get(port, "/handler/any", null).statusCode()).isEqualTo(429);
		}
	}

	@Test
	void matchesRulesAndAnnotationsWithinTheBasePath() throws Exception {
		try (ConfigurableApplicationContext context = start("memory", "--spring.webflux.base-path=/api",
				"--ratelimit.rules[0].path=/fn/**", "--ratelimit.rules[0].limit=1", "--ratelimit.rules[0].window=1m",
				"--ratelimit.rules[0].name=fn", "--ratelimit.rules[1].path=/limited", "--ratelimit.rules[1].limit=5",
				"--ratelimit.rules[1].window=1m", "--ratelimit.rules[1].name=early",
				"--ratelimit.rules[1].before-security=true")) {
			int port = port(context);
			assertThat(get(port, "/api/fn/hello", null).statusCode()).isEqualTo(200);
			assertThat(get(port, "/api/fn/hello", null).statusCode()).isEqualTo(429);
			// the rule decided before security, then the annotation, each in a line of its own
			assertThat(get(port, "/api/limited", null).headers().allValues("RateLimit-Policy"))
				.containsExactly("\"early\";q=5;w=60", "\"limited\";q=3;w=3600");
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "memory", "redis" })
	void limitsBeforeSecurityWhatAFilterAnswersItself(String store) throws Exception {
		try (ConfigurableApplicationContext context = start(store, "--ratelimit.rules[0].path=/guarded",
				"--ratelimit.rules[0].limit=2", "--ratelimit.rules[0].window=1m", "--ratelimit.rules[0].name=guarded",
				"--ratelimit.rules[0].before-security=true")) {
			int port = port(context);
			List<Integer> statuses = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				statuses.add(get(port, "/guarded", null).statusCode());
			}
			assertThat(statuses).containsExactly(401, 401, 429, 429);
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "memory", "redis" })
	void keysEachClientByWhatAReactiveResolverAnswers(String store) throws Exception {
		try (ConfigurableApplicationContext context = start(store)) {
			int port = port(context);
			assertThat(get(port, "/keyed", "alpha").statusCode()).isEqualTo(200);
			assertThat(get(port, "/keyed", "alpha").statusCode()).isEqualTo(429);
			assertThat(get(port, "/keyed", "beta").statusCode()).isEqualTo(200);
			// no key: the resolver answers nothing, and the client address is the key
			assertThat(get(port, "/keyed", null).statusCode()).isEqualTo(200);
			assertThat(get(port, "/keyed", null).statusCode()).isEqualTo(429);
		}
	}

	@Test
	void refusesToStartOnAClientThatBlocksItsCaller() {
		// the failure is expected: its report would only clutter the build's output
		assertThatException()
			.isThrownBy(() -> start("redis", "--spring.data.redis.client-type=jedis",
					"--logging.level.org.springframework.boot.diagnostics.LoggingFailureAnalysisReporter=off"))
			.havingRootCause()
			.isInstanceOf(RateLimitConfigurationException.class)
			.withMessageStartingWith("ratelimit.store is redis on Jedis, whose calls block the calling thread");
	}

	@Test
	void limitsNothingWhenDisabled() throws Exception {
		try (ConfigurableApplicationContext context = start("memory", "--ratelimit.enabled=false")) {
			assertThat(context.getBeansOfType(RateLimitHandlerAdapter.class)).isEmpty();
			for (int i = 0; i < 5; i++) {
				assertThat(get(port(context), "/limited", null).statusCode()).isEqualTo(200);
			}
		}
	}

	private ConfigurableApplicationContext start(String store, String... arguments) {
		List<String> args = new ArrayList<>(List.of("--server.port=0", "--spring.main.banner-mode=off",
				"--ratelimit.store=" + store,
				"--spring.data.redis.url=" + this.redis.uri(), "--ratelimit.redis.key-prefix=webflux-"
						+ System.nanoTime() + ":"));
		args.addAll(List.of(arguments));
		return new SpringApplicationBuilder(App.class).web(WebApplicationType.REACTIVE).run(args.toArray(String[]::new));
	}

	private static int port(ConfigurableApplicationContext context) {
		return ((WebServerApplicationContext) context).getWebServer().getPort();
	}

	private HttpResponse<String> get(int port, String path, String apiKey) throws Exception {
		return get(port, path, apiKey, null);
	}

	private HttpResponse<String> get(int port, String path, String apiKey, String user) throws Exception {
		// an answer that never comes fails the test rather than hanging the build
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(10));
		if (apiKey != null) {
			request.header("X-Api-Key", apiKey);
		}
		if (user != null) {
			request.header("X-User", user);
		}
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	@TestApplication
	@Import(LimitedController.class)
	static class App {

		final AtomicInteger principalsAsked = new AtomicInteger();

		/** Signs in the user that {@code X-User} names, counting each time the principal is asked for. */
		@Bean
		@Order(-50)
		WebFilter users() {
			return (exchange, chain) -> {
				String user = exchange.getRequest().getHeaders().getFirst("X-User");
				if (user == null) {
					return chain.filter(exchange);
				}
				Mono<Principal> principal = Mono.fromSupplier(() -> {
					this.principalsAsked.incrementAndGet();
					return () -> user;
				});
				return chain.filter(exchange.mutate().principal(principal).build());
			};
		}

		@Bean
		RouterFunction<ServerResponse> functionalEndpoint() {
			return RouterFunctions.route()
				.GET("/fn/hello", (request) -> ServerResponse.ok().bodyValue("hello"))
				.build();
		}

		/** A handler that is neither a controller nor a router function, as a gateway's routes are. */
		@Bean
		SimpleUrlHandlerMapping plainHandler() {
			WebHandler handler = (exchange) -> exchange.getResponse()
				.writeWith(Mono.just(exchange.getResponse().bufferFactory().wrap("handler".getBytes())));
			return new SimpleUrlHandlerMapping(Map.of("/handler/**", handler), 0);
		}

		/** Answers /guarded itself, as a security filter answers a wrong password. */
		@Bean
		@Order(-100)
		WebFilter guard() {
			return (exchange, chain) -> {
				if (exchange.getRequest().getPath().value().equals("/guarded")) {
					exchange.getResponse().setStatusCode(HttpStatus.UNAUTHORIZED);
					return exchange.getResponse().setComplete();
				}
				return chain.filter(exchange);
			};
		}

		@Bean
		ReactiveKeyResolver apiKeys() {
			return (exchange) -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-Api-Key"));
		}

	}

	@RestController
	static class LimitedController {

		@GetMapping("/limited")
		@RateLimited(limit = 3, window = "1h", name = "limited")
		Mono<String> limited() {
			return Mono.just("limited");
		}

		@GetMapping("/user")
		@RateLimited(limit = 1, window = "1h", name = "user", key = "user")
		Mono<String> user() {
			return Mono.just("user");
		}

		@GetMapping("/keyed")
		@RateLimited(limit = 1, window = "1h", name = "keyed", key = "bean:apiKeys")
		Mono<String> keyed() {
			return Mono.just("keyed");
		}

	}

}
