package dev.ratelimit.spring.autoconfigure;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.FailureStatus;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.changes.internal.PolicyChanges;
import dev.ratelimit.spring.webmvc.RateLimitWebMvcAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A store of the application's own, which decides through an in-memory store and offers every capability of
 * the port: health, metrics, runtime changes shared with its fleet and warm-up work for it as for the Redis
 * store, through the port alone.
 */
class OwnStoreCapabilitiesTests {

	private final OwnStore store = new OwnStore();

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitWebMvcAutoConfiguration.class, WebMvcAutoConfiguration.class))
		.withUserConfiguration(Limited.class)
		.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
		.withBean(RateLimitStore.class, () -> this.store);

	@Test
	void reportsTheFailurePolicyAndTheFleetOfTheStoreInItsHealth() {
		this.runner.withPropertyValues("ratelimit.health.down-when-failing=true").run((context) -> {
			assertThat(health(context).getDetails()).containsEntry("failurePolicy", "deny")
				.containsEntry("failurePolicyDecisions", 0L)
				.containsEntry("fleetInstances", 3)
				.containsValue("answering")
				.doesNotContainKey("failingSince")
				.doesNotContainKey("failingPart");
			this.store.failing = true;
			Health failing = health(context);
			assertThat(failing.getStatus()).isEqualTo(Status.DOWN);
			assertThat(failing.getDetails()).containsEntry("failurePolicyDecisions", 2L)
				.containsEntry("failurePolicyDecisionsDuringOutage", 2L)
				.containsValue("failing")
				.containsKey("failingSince")
				.containsEntry("failingPart", "slots 0-5460");
		});
	}

	@Test
	void publishesTheStoresFailingAndFleetGaugesAndCountsWhatItsFailurePolicyDecided() {
		this.runner.run((context) -> {
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			context.getBeansOfType(MeterBinder.class).values().forEach((binder) -> binder.bindTo(registry));
			assertThat(registry.get("ratelimit.fleet.instances").gauge().value()).isEqualTo(3);
			assertThat(registry.get("ratelimit.store.failing").gauge().value()).isZero();
			assertThat(registry.get("ratelimit.store.failing.duration").timeGauge().value(TimeUnit.SECONDS)).isZero();
			this.store.failing = true;
			assertThat(registry.get("ratelimit.store.failing").gauge().value()).isOne();
			assertThat(registry.get("ratelimit.store.failing.duration").timeGauge().value(TimeUnit.SECONDS))
				.isEqualTo(5);
			// the starter listens to the store's failures through the port, whatever the store
			assertThat(this.store.listeners).hasSize(1);
			this.store.listeners.get(0).onFailure(List.of(API), new IllegalStateException("server away"));
			this.store.listeners.get(0).onGiveBackFailure(List.of(API), new IllegalStateException("server away"));
			assertThat(count(context, "store_failure")).isOne();
			assertThat(count(context, "give_back_failure")).isOne();
		});
	}

	@Test
	void sharesARuntimeChangeWithTheFleetAndAppliesOneSharedElsewhere() {
		this.runner.run((context) -> {
			PolicyChanges changes = context.getBean(PolicyChanges.class);
			changes.change("api", 5L, null, null);
			assertThat(this.store.shared).containsEntry("api",
					new RateLimitStore.SharedChange(5, Duration.ofMinutes(1), 5));
			this.store.shared.put("api", new RateLimitStore.SharedChange(7, Duration.ofSeconds(30), 7));
			this.store.changed.run();
			assertThat(changes.current("api").limit()).isEqualTo(7);
			assertThat(changes.current("api").window()).isEqualTo(Duration.ofSeconds(30));
			changes.remove("api");
			assertThat(this.store.shared).doesNotContainKey("api");
			assertThat(changes.current("api").limit()).isEqualTo(10);
		});
	}

	@Test
	void warmsTheStoreUpWithEveryStackOfPoliciesAtStartup() {
		this.runner.run((context) -> assertThat(this.store.warmedUp).singleElement()
			.satisfies((stacks) -> assertThat(stacks).containsExactly(List.of(API))));
	}

	private static final RateLimitPolicy API = RateLimitPolicy.of("api", Algorithm.GCRA, 10, Duration.ofMinutes(1));

	private static Health health(AssertableWebApplicationContext context) {
		Health health = context.getBean("ratelimitHealthContributor", HealthIndicator.class).health();
		assertThat(health).isNotNull();
		return health;
	}

	private static double count(AssertableWebApplicationContext context, String outcome) {
		MeterRegistry registry = context.getBean(MeterRegistry.class);
		return registry.get("ratelimit.decisions").tag("policy", "api").tag("outcome", outcome).counter().count();
	}

	@RestController
	static class Limited {

		@GetMapping("/api")
		@RateLimited(name = "api", limit = 10, window = "1m")
		String api() {
			return "ok";
		}

	}

	/** Decides in memory, and offers the port's capabilities from fields a test sets. */
	static final class OwnStore implements RateLimitStore {

		private final InMemoryRateLimitStore local = InMemoryRateLimitStore.builder()
			.timeSource(new ManualTimeSource())
			.build();

		volatile boolean failing;

		final List<FailureListener> listeners = new CopyOnWriteArrayList<>();

		final Map<String, SharedChange> shared = new ConcurrentHashMap<>();

		volatile Runnable changed = () -> {
		};

		final List<Collection<List<RateLimitPolicy>>> warmedUp = new CopyOnWriteArrayList<>();

		@Override
		public RateLimiter limiter(RateLimitPolicy policy) {
			return this.local.limiter(policy);
		}

		@Override
		public List<Decision> decideAll(List<KeyedPolicy> limits) {
			return this.local.decideAll(limits);
		}

		@Override
		public void giveBack(List<KeyedPolicy> limits, List<Decision> decisions) {
			this.local.giveBack(limits, decisions);
		}

		@Override
		public Decision inspect(String key, RateLimitPolicy policy) {
			return this.local.inspect(key, policy);
		}

		@Override
		public void reset(String key, RateLimitPolicy policy) {
			this.local.reset(key, policy);
		}

		@Override
		public void change(RateLimitPolicy from, RateLimitPolicy to) {
			this.local.change(from, to);
		}

		@Override
		public Optional<Fleet> fleet() {
			return Optional.of(() -> 3);
		}

		@Override
		public Optional<Failures> failures() {
			return Optional.of(new Failures() {

				@Override
				public FailureStatus status() {
					return OwnStore.this.failing
							? new FailureStatus(FailurePolicy.DENY, Duration.ofSeconds(5), 2, 2, "slots 0-5460")
							: new FailureStatus(FailurePolicy.DENY, null, 0, 0);
				}

				@Override
				public void addListener(FailureListener listener) {
					OwnStore.this.listeners.add(listener);
				}

			});
		}

		@Override
		public Optional<SharedChanges> sharedChanges() {
			return Optional.of(new SharedChanges() {

				@Override
				public void share(String policy, @Nullable SharedChange change) {
					if (change != null) {
						OwnStore.this.shared.put(policy, change);
					}
					else {
						OwnStore.this.shared.remove(policy);
					}
				}

				@Override
				public Map<String, SharedChange> read(Collection<String> policies) {
					Map<String, SharedChange> read = new TreeMap<>(OwnStore.this.shared);
					read.keySet().retainAll(policies);
					return read;
				}

				@Override
				public void onChange(Runnable listener) {
					OwnStore.this.changed = listener;
				}

			});
		}

		@Override
		public Optional<WarmUp> warmUp() {
			return Optional.of((stacks) -> {
				this.warmedUp.add(stacks);
				return CompletableFuture.completedFuture(null);
			});
		}

	}

}
