package dev.ratelimit.spring.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.spring.RateLimitConfigurationException;
import dev.ratelimit.spring.RateLimitExceededException;
import dev.ratelimit.spring.LimitResolver;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.actuate.RateLimitEndpoint;
import dev.ratelimit.spring.web.internal.LimitCatalog;
import dev.ratelimit.spring.webflux.RateLimitWebFluxAutoConfiguration;
import dev.ratelimit.spring.webmvc.RateLimitWebMvcAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.aop.support.AopUtils;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.http.codec.autoconfigure.CodecsAutoConfiguration;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.stereotype.Service;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.test.web.servlet.assertj.MockMvcTester;
import org.springframework.test.web.servlet.assertj.MvcTestResult;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Tests {@link RateLimited} on the methods of beans that are no controllers: each return type, keys from the
 * arguments and from the security context, proxies of a class and of an interface, the declarations that stop
 * the start, and the 429 that the exception becomes when it leaves a handler, on both web stacks.
 */
@ExtendWith({ QuietOutput.class, OutputCaptureExtension.class })
class LimitedMethodsTests {

	private final ManualTimeSource time = new ManualTimeSource();

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitWebMvcAutoConfiguration.class, WebMvcAutoConfiguration.class,
				HttpMessageConvertersAutoConfiguration.class, JacksonAutoConfiguration.class))
		.withBean(ManualTimeSource.class, () -> this.time)
		.withBean(MeterRegistry.class, SimpleMeterRegistry::new);

	@Test
	void limitsABlockingMethodPerArgumentAndThrowsOverTheLimit() {
		this.runner.withUserConfiguration(Quotes.class).run((context) -> {
			Quotes quotes = context.getBean(Quotes.class);
			assertThat(AopUtils.isCglibProxy(quotes)).isTrue();
			assertThat(quotes.quote("alice")).isEqualTo("quote for alice");
			assertThat(quotes.quote("alice")).isEqualTo("quote for alice");
			RateLimitExceededException exceeded = catchExceeded(() -> quotes.quote("alice"));
			assertThat(exceeded.policy().name()).isEqualTo("quotes");
			assertThat(exceeded.retryAfter()).isEqualTo(Duration.ofSeconds(5));
			assertThat(exceeded.decision().allowed()).isFalse();
			assertThat(exceeded.headers().getFirst("Retry-After")).isEqualTo("5");
			assertThat(exceeded).hasMessage("Rate limit exceeded: 2 per 10 seconds (policy 'quotes'); retry in 5 "
					+ "seconds.");
			assertThat(quotes.quote("bob")).as("another customer's quota").isEqualTo("quote for bob");
			assertThat(quotes.calls()).as("calls that ran").isEqualTo(3);
			this.time.advance(Duration.ofSeconds(5));
			assertThat(quotes.quote("alice")).isEqualTo("quote for alice");
			assertThat(context.getBean(MeterRegistry.class)
				.get("ratelimit.decisions")
				.tags("policy", "quotes", "outcome", "rejected")
				.counter()
				.count()).isEqualTo(1);
		});
	}

	@Test
	void givesACustomerTheLimitsOfItsRecordOnAMethodCallToo() {
		// the key as the limit computed it, with its kind: spel: for a key of an expression
		LimitResolver records = (client, declared) -> client.equals("spel:acme")
				? declared.withLimit(3, declared.window()) : null;
		this.runner.withUserConfiguration(Quotes.class).withBean(LimitResolver.class, () -> records).run((context) -> {
			Quotes quotes = context.getBean(Quotes.class);
			for (int i = 0; i < 3; i++) {
				assertThat(quotes.quote("acme")).isEqualTo("quote for acme");
			}
			assertThat(catchExceeded(() -> quotes.quote("acme"))).hasMessageStartingWith(
					"Rate limit exceeded: 3 per 10 seconds (policy 'quotes')");
			quotes.quote("initech");
			quotes.quote("initech");
			assertThat(catchExceeded(() -> quotes.quote("initech")).policy().limit()).as("the declared limit")
				.isEqualTo(2);
		});
	}

	@Test
	void holdsAMethodsPermitInFlightUntilItsResultEnds() {
		this.runner.withUserConfiguration(Quotes.class).run((context) -> {
			Quotes quotes = context.getBean(Quotes.class);
			CompletableFuture<String> running = new CompletableFuture<>();
			assertThat(quotes.report("acme", running)).isSameAs(running);
			CompletableFuture<String> refused = quotes.report("acme", CompletableFuture.completedFuture("second"));
			assertThat(refused).isCompletedExceptionally();
			assertThatExceptionOfType(CompletionException.class).isThrownBy(refused::join)
				.withCauseInstanceOf(RateLimitExceededException.class)
				.withMessageContaining("Too many requests in flight: 1 at once");
			assertThat(quotes.report("initech", CompletableFuture.completedFuture("other")).join()).isEqualTo("other");
			running.complete("first");
			assertThat(quotes.report("acme", CompletableFuture.completedFuture("third")).join()).isEqualTo("third");
			// a subscription cancelled before its end gives its permit back too
			Sinks.One<String> never = Sinks.one();
			Disposable subscription = quotes.reportReactive("acme", never.asMono()).subscribe();
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> quotes.reportReactive("acme", Mono.just("second")).block());
			subscription.dispose();
			assertThat(quotes.reportReactive("acme", Mono.just("third")).block()).isEqualTo("third");
		});
	}

	@Test
	void readsAPropertyOfAnArgument() {
		this.runner.withUserConfiguration(Quotes.class).run((context) -> {
			Quotes quotes = context.getBean(Quotes.class);
			assertThat(quotes.order(new Order("acme", 1))).isEqualTo("order 1");
			assertThat(quotes.order(new Order("acme", 2))).isEqualTo("order 2");
			catchExceeded(() -> quotes.order(new Order("acme", 3)));
			assertThat(quotes.order(new Order("initech", 4))).isEqualTo("order 4");
		});
	}

	@Test
	void failsTheFutureOfAnAsynchronousMethod() {
		this.runner.withUserConfiguration(Quotes.class).run((context) -> {
			Quotes quotes = context.getBean(Quotes.class);
			assertThat(quotes.quoteLater("alice").join()).isEqualTo("later for alice");
			CompletableFuture<String> refused = quotes.quoteLater("alice");
			assertThat(refused).isCompletedExceptionally();
			assertThatExceptionOfType(CompletionException.class).isThrownBy(refused::join)
				.withCauseInstanceOf(RateLimitExceededException.class);
			assertThat(quotes.calls()).isEqualTo(1);
		});
	}

	@Test
	void decidesEachSubscriptionOfAMonoOrAFlux() {
		this.runner.withUserConfiguration(Quotes.class).run((context) -> {
			Quotes quotes = context.getBean(Quotes.class);
			Mono<String> mono = quotes.quoteReactive("alice");
			assertThat(quotes.subscriptions()).as("nothing decided before a subscription").isZero();
			assertThat(mono.block(Duration.ofSeconds(5))).isEqualTo("reactive for alice");
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> mono.block(Duration.ofSeconds(5)));
			assertThat(quotes.subscriptions()).isEqualTo(1);
			Flux<String> flux = quotes.quotesReactive("bob");
			assertThat(flux.collectList().block(Duration.ofSeconds(5))).containsExactly("bob 1", "bob 2");
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> flux.collectList().block(Duration.ofSeconds(5)));
		});
	}

	@Test
	void limitsEveryMethodOfAnAnnotatedClassTogether() {
		this.runner.withUserConfiguration(Partner.class).run((context) -> {
			Partner partner = context.getBean(Partner.class);
			assertThat(partner.ping()).isEqualTo("pong");
			assertThat(partner.status()).isEqualTo("up");
			catchExceeded(partner::ping);
			assertThat(partner.toString()).as("a method of Object is not limited").startsWith("Partner");
		});
	}

	@Test
	void limitsAProxyOfAnInterface() {
		this.runner.withPropertyValues("spring.aop.proxy-target-class=false")
			.withBean(Greeter.class, FriendlyGreeter::new)
			.run((context) -> {
				Greeter greeter = context.getBean(Greeter.class);
				assertThat(AopUtils.isJdkDynamicProxy(greeter)).isTrue();
				assertThat(greeter.greet("alice")).isEqualTo("hello alice");
				catchExceeded(() -> greeter.greet("alice"));
				assertThat(greeter.greet("bob")).isEqualTo("hello bob");
			});
	}

	@Test
	void keysByTheAuthenticatedUserOfTheSecurityContext() {
		this.runner.withUserConfiguration(Quotes.class).run((context) -> {
			Quotes quotes = context.getBean(Quotes.class);
			try {
				SecurityContextHolder.getContext()
					.setAuthentication(UsernamePasswordAuthenticationToken.authenticated("alice", "n/a",
							AuthorityUtils.NO_AUTHORITIES));
				assertThat(quotes.mine()).isEqualTo("mine");
				catchExceeded(quotes::mine);
				SecurityContextHolder.getContext()
					.setAuthentication(UsernamePasswordAuthenticationToken.authenticated("bob", "n/a",
							AuthorityUtils.NO_AUTHORITIES));
				assertThat(quotes.mine()).isEqualTo("mine");
				SecurityContextHolder.clearContext();
				assertThat(quotes.mine()).as("the calls without a user share one quota").isEqualTo("mine");
				catchExceeded(quotes::mine);
			}
			finally {
				SecurityContextHolder.clearContext();
			}
		});
	}

	@Test
	void appliesOverridesAndReportsTheLimitAtStartup(CapturedOutput output) {
		Logger logger = (Logger) LoggerFactory.getLogger(LimitCatalog.class);
		logger.setLevel(Level.INFO);
		try {
			this.runner.withUserConfiguration(Quotes.class)
				.withPropertyValues("ratelimit.policies.quotes.limit=1")
				.run((context) -> {
					Quotes quotes = context.getBean(Quotes.class);
					quotes.quote("alice");
					catchExceeded(() -> quotes.quote("alice"));
					assertThat(output).contains("Rate limit 'quotes': GCRA 1/PT10S by #customer on calls of "
							+ "Quotes.quote; from @RateLimited on " + Quotes.class.getName() + ".quote(String)");
				});
		}
		finally {
			logger.setLevel(null);
		}
	}

	@Test
	void warnsOfACallFromTheBeansOwnMethodsWhichItsLimitsNeverApplyTo(CapturedOutput output) {
		this.runner.withUserConfiguration(SelfCalling.class).run((context) -> {
			SelfCalling service = context.getBean(SelfCalling.class);
			assertThat(service.outer()).isEqualTo("inner");
			assertThat(service.outer()).as("the call from outer() is not limited").isEqualTo("inner");
			assertThat(output).containsOnlyOnce("@RateLimited on " + SelfCalling.class.getName() + ".inner() never "
					+ "applies when SelfCalling.outer() calls it: a call from the bean's own methods does not go "
					+ "through its proxy.");
		});
	}

	@Test
	void letsCallsThroughInShadowModeAndCountsWhatItWouldHaveRefused() {
		this.runner.withUserConfiguration(Quotes.class)
			.withPropertyValues("ratelimit.policies.quotes.shadow=true")
			.run((context) -> {
				Quotes quotes = context.getBean(Quotes.class);
				for (int i = 0; i < 3; i++) {
					assertThat(quotes.quote("alice")).isEqualTo("quote for alice");
				}
				assertThat(context.getBean(MeterRegistry.class)
					.get("ratelimit.decisions")
					.tags("policy", "quotes", "outcome", "shadow_rejected")
					.counter()
					.count()).isEqualTo(1);
			});
	}

	@Test
	void changesAndResetsTheLimitOfAMethodThroughTheActuatorEndpoint() {
		this.runner.withUserConfiguration(Quotes.class)
			.withConfiguration(AutoConfigurations.of(RateLimitEndpointAutoConfiguration.class,
					EndpointAutoConfiguration.class, WebEndpointAutoConfiguration.class))
			.withPropertyValues("management.endpoints.web.exposure.include=ratelimit")
			.run((context) -> {
				RateLimitEndpoint endpoint = context.getBean(RateLimitEndpoint.class);
				assertThat(endpoint.policy("quotes").endpoints()).singleElement()
					.satisfies((usage) -> assertThat(usage.routes()).containsExactly("calls of Quotes.quote"));
				Quotes quotes = context.getBean(Quotes.class);
				endpoint.change("quotes", 1L, null, null);
				quotes.quote("alice");
				catchExceeded(() -> quotes.quote("alice"));
				endpoint.reset("quotes", new String[] { "spel:alice" });
				assertThat(quotes.quote("alice")).as("after a reset of the key").isEqualTo("quote for alice");
			});
	}

	@Test
	void stopsTheStartAtAKeyThatNeedsARequest() {
		this.runner.withUserConfiguration(ByAddress.class)
			.run((context) -> assertThat(cause(context.getStartupFailure()))
				.isInstanceOf(RateLimitConfigurationException.class)
				.hasMessage("@RateLimited on " + ByAddress.class.getName() + ".orders() keys its calls by 'ip', "
						+ "which reads an HTTP request, and a call of a bean method has none."));
	}

	@Test
	void stopsTheStartAtAKeyExpressionThatDoesNotParse() {
		this.runner.withUserConfiguration(BadExpression.class)
			.run((context) -> assertThat(cause(context.getStartupFailure()))
				.isInstanceOf(RateLimitConfigurationException.class)
				.hasMessageStartingWith("Invalid key of @RateLimited on " + BadExpression.class.getName()
						+ ".orders(String)"));
	}

	@Test
	void stopsTheStartAtMethodsThatAProxyCannotAdvise() {
		this.runner.withUserConfiguration(FinalMethod.class)
			.run((context) -> assertThat(cause(context.getStartupFailure()))
				.hasMessageStartingWith("@RateLimited on " + FinalMethod.class.getName() + ".orders() can never "
						+ "take effect: it is final"));
		this.runner.withUserConfiguration(PrivateMethod.class)
			.run((context) -> assertThat(cause(context.getStartupFailure()))
				.hasMessageStartingWith("@RateLimited on " + PrivateMethod.class.getName() + ".orders() can never "
						+ "take effect: it is private"));
	}

	@Test
	void answersTheExceptionOfAServiceWithThe429OfALimitedHandlerOnSpringMvc() {
		this.runner.withUserConfiguration(Quotes.class, QuoteController.class).run((context) -> {
			MockMvcTester mvc = MockMvcTester.from(context);
			assertThat(mvc.get().uri("/quote?customer=alice")).hasStatusOk();
			assertThat(mvc.get().uri("/quote?customer=alice")).hasStatusOk();
			MvcTestResult rejected = mvc.get().uri("/quote?customer=alice").exchange();
			assertThat(rejected).hasStatus(HttpStatus.TOO_MANY_REQUESTS)
				.hasContentType(MediaType.APPLICATION_PROBLEM_JSON)
				.headers()
				.hasValue("Retry-After", "5")
				.hasValue("RateLimit-Policy", "\"quotes\";q=2;w=10")
				.hasValue("RateLimit", "\"quotes\";r=0;t=10");
			assertThat(rejected).bodyJson().extractingPath("$.policies").asArray().containsExactly("quotes");
			assertThat(mvc.get().uri("/quote?customer=bob")).hasStatusOk();
		});
	}

	@Test
	void answersTheExceptionOfAServiceWithThe429OfALimitedHandlerOnWebFlux() {
		new ReactiveWebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
					RateLimitWebFluxAutoConfiguration.class, WebFluxAutoConfiguration.class,
					CodecsAutoConfiguration.class, JacksonAutoConfiguration.class))
			.withBean(ManualTimeSource.class, () -> this.time)
			.withUserConfiguration(Quotes.class, ReactiveQuoteController.class)
			.run((context) -> {
				WebTestClient client = WebTestClient.bindToApplicationContext(context).build();
				client.get().uri("/quote?customer=alice").exchange().expectStatus().isOk();
				client.get().uri("/quote?customer=alice").exchange().expectStatus().isOk();
				client.get()
					.uri("/quote?customer=alice")
					.exchange()
					.expectStatus()
					.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
					.expectHeader()
					.contentType(MediaType.APPLICATION_PROBLEM_JSON)
					.expectHeader()
					.valueEquals("Retry-After", "5")
					.expectHeader()
					.valueEquals("RateLimit", "\"quotes\";r=0;t=10")
					.expectBody()
					.jsonPath("$.policies[0]")
					.isEqualTo("quotes");
				client.get().uri("/quote?customer=bob").exchange().expectStatus().isOk();
			});
	}

	static RateLimitExceededException catchExceeded(ThrowingCallable call) {
		RateLimitExceededException exceeded = catchThrowableOfType(RateLimitExceededException.class, call);
		assertThat(exceeded).as("the exception of a call over its limit").isNotNull();
		return exceeded;
	}

	private static Throwable cause(Throwable failure) {
		return NestedExceptionUtils.getMostSpecificCause(failure);
	}

	record Order(String customerId, int number) {
	}

	@Service
	static class Quotes {

		private final AtomicInteger calls = new AtomicInteger();

		private final AtomicInteger subscriptions = new AtomicInteger();

		int calls() {
			return this.calls.get();
		}

		int subscriptions() {
			return this.subscriptions.get();
		}

		@RateLimited(name = "quotes", limit = 2, window = "10s", key = "#customer")
		public String quote(String customer) {
			this.calls.incrementAndGet();
			return "quote for " + customer;
		}

		@RateLimited(limit = 2, window = "10s", key = "#order.customerId")
		public String order(Order order) {
			return "order " + order.number();
		}

		@RateLimited(limit = 1, window = "10s", key = "#customer")
		public CompletableFuture<String> quoteLater(String customer) {
			this.calls.incrementAndGet();
			return CompletableFuture.completedFuture("later for " + customer);
		}

		@RateLimited(limit = 1, window = "10s", key = "#customer")
		public Mono<String> quoteReactive(String customer) {
			return Mono.fromSupplier(() -> {
				this.subscriptions.incrementAndGet();
				return "reactive for " + customer;
			});
		}

		@RateLimited(limit = 1, window = "10s", key = "#customer")
		public Flux<String> quotesReactive(String customer) {
			return Flux.fromIterable(List.of(customer + " 1", customer + " 2"));
		}

		@RateLimited(limit = 1, window = "10s", key = "user")
		public String mine() {
			return "mine";
		}

		@RateLimited(limit = 100, window = "10s", key = "#customer", concurrency = 1)
		public CompletableFuture<String> report(String customer, CompletableFuture<String> result) {
			return result;
		}

		@RateLimited(limit = 100, window = "10s", key = "#customer", concurrency = 1)
		public Mono<String> reportReactive(String customer, Mono<String> result) {
			return result;
		}

	}

	@Service
	@RateLimited(limit = 2, window = "10s", key = "global")
	static class Partner {

		public String ping() {
			return "pong";
		}

		public String status() {
			return "up";
		}

		@Override
		public String toString() {
			return "Partner";
		}

	}

	interface Greeter {

		@RateLimited(limit = 1, window = "10s", key = "#name")
		String greet(String name);

	}

	static class FriendlyGreeter implements Greeter {

		@Override
		public String greet(String name) {
			return "hello " + name;
		}

	}

	@Service
	static class SelfCalling {

		public String outer() {
			return inner();
		}

		@RateLimited(limit = 1, window = "10s", key = "global")
		public String inner() {
			return "inner";
		}

	}

	@Service
	static class ByAddress {

		@RateLimited(limit = 1, window = "1s")
		public String orders() {
			return "orders";
		}

	}

	@Service
	static class BadExpression {

		@RateLimited(limit = 1, window = "1s", key = "#customer.(")
		public String orders(String customer) {
			return "orders";
		}

	}

	@Service
	static class FinalMethod {

		@RateLimited(limit = 1, window = "1s", key = "global")
		public final String orders() {
			return "orders";
		}

	}

	@Service
	static class PrivateMethod {

		@RateLimited(limit = 1, window = "1s", key = "global")
		private String orders() {
			return "orders";
		}

	}

	@RestController
	static class QuoteController {

		private final Quotes quotes;

		QuoteController(Quotes quotes) {
			this.quotes = quotes;
		}

		@GetMapping("/quote")
		String quote(@RequestParam String customer) {
			return this.quotes.quote(customer);
		}

	}

	@RestController
	static class ReactiveQuoteController {

		private final Quotes quotes;

		ReactiveQuoteController(Quotes quotes) {
			this.quotes = quotes;
		}

		@GetMapping("/quote")
		Mono<String> quote(@RequestParam String customer) {
			return Mono.fromCallable(() -> this.quotes.quote(customer));
		}

	}

}
