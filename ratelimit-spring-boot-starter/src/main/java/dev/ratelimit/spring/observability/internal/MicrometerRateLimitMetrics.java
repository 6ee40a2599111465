package dev.ratelimit.spring.observability.internal;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.TimeUnit;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;

/**
 * Publishes {@code ratelimit.decisions}, a counter tagged with the policy, its plan ({@code default} for a
 * declaration's own limits; a plan's limits are a policy of their own, so both tags take only declared values)
 * and the outcome ({@code allowed},
 * {@code delayed} when a leaky bucket held the request for its slot, {@code rejected}, {@code shadow_rejected} and
 * {@code shadow_delayed} when a policy in shadow mode let through a request it would have rejected or held,
 * or {@code store_failure}
 * when the Redis store's failure policy decided instead of Redis, {@code exempt} when an exemption let the
 * request through undecided, {@code give_back_failure} when Redis did not take back the permits of a request
 * whose outcome did not count), and
 * {@code ratelimit.decision.latency}, a timer of how long the store takes to decide, tagged with the store; and
 * {@code ratelimit.near.limit}, a counter tagged with the policy and its plan of the admitted requests that left
 * their key with fewer permits than {@code ratelimit.near-limit-share} of the limit, as Envoy's
 * {@code near_limit}; and {@code ratelimit.in.flight}, a gauge tagged with the policy and its plan of the permits
 * in flight that this instance's requests hold. Keys are never tags: there are as many as clients.
 */
public final class MicrometerRateLimitMetrics implements RateLimitMetrics {

	/** Name of the counter and timer of decisions. */
	public static final String DECISIONS = "ratelimit.decisions";

	static final String LATENCY = "ratelimit.decision.latency";

	static final String NEAR_LIMIT = "ratelimit.near.limit";

	static final String IN_FLIGHT = "ratelimit.in.flight";

	/**
	 * Counters are kept by outcome ordinal, with the store failures, the exempt requests and the failed
	 * give-backs after them.
	 */
	private static final int STORE_FAILURE = Outcome.values().length;

	private static final int EXEMPT = STORE_FAILURE + 1;

	private static final int GIVE_BACK_FAILURE = EXEMPT + 1;

	private final ObjectProvider<MeterRegistry> registries;

	private final String store;

	private final PolicyPlans plans;

	private final NearLimit nearLimit;

	private final Map<String, Counter[]> counters = new ConcurrentHashMap<>();

	private final Map<String, Counter> nearLimitCounters = new ConcurrentHashMap<>();

	private final Map<String, AtomicLong> inFlight = new ConcurrentHashMap<>();

	private volatile @Nullable MeterRegistry registry;

	private volatile boolean resolved;

	private volatile @Nullable Timer latency;

	public MicrometerRateLimitMetrics(ObjectProvider<MeterRegistry> registries, String store, PolicyPlans plans,
			NearLimit nearLimit) {
		this.registries = registries;
		this.store = store;
		this.plans = plans;
		this.nearLimit = nearLimit;
	}

	@Override
	public void record(List<RateLimitPolicy> policies, Outcome outcome, long nanos) {
		MeterRegistry registry = registry();
		if (registry == null) {
			return;
		}
		count(registry, policies, outcome.ordinal());
		Timer latency = this.latency;
		if (latency == null) {
			latency = Timer.builder(LATENCY)
				.description("Time taken by the store to decide a request")
				.tag("store", this.store)
				.register(registry);
			this.latency = latency;
		}
		latency.record(nanos, TimeUnit.NANOSECONDS);
	}

	@Override
	public void storeFailure(List<RateLimitPolicy> policies) {
		MeterRegistry registry = registry();
		if (registry != null) {
			count(registry, policies, STORE_FAILURE);
		}
	}

	@Override
	public void exempt(List<RateLimitPolicy> policies) {
		MeterRegistry registry = registry();
		if (registry != null) {
			count(registry, policies, EXEMPT);
		}
	}

	@Override
	public void giveBackFailure(List<RateLimitPolicy> policies) {
		MeterRegistry registry = registry();
		if (registry != null) {
			count(registry, policies, GIVE_BACK_FAILURE);
		}
	}

	@Override
	public void admitted(List<RateLimitPolicy> policies, List<Decision> decisions) {
		MeterRegistry registry = registry();
		if (registry == null) {
			return;
		}
		for (int i = 0; i < policies.size(); i++) {
			if (this.nearLimit.isNear(decisions.get(i))) {
				this.nearLimitCounters.computeIfAbsent(policies.get(i).name(), (name) -> Counter.builder(NEAR_LIMIT)
					.description("Admitted requests that left their key near the limit")
					.tag("policy", name)
					.tag("plan", this.plans.plan(name))
					.register(registry)).increment();
			}
		}
	}

	@Override
	public void inFlight(RateLimitPolicy policy, int change) {
		MeterRegistry registry = registry();
		if (registry == null) {
			return;
		}
		this.inFlight.computeIfAbsent(policy.name(), (name) -> {
			AtomicLong held = new AtomicLong();
			Gauge.builder(IN_FLIGHT, held, AtomicLong::get)
				.description("Permits in flight that this instance's requests hold")
				.tag("policy", name)
				.tag("plan", this.plans.plan(name))
				.register(registry);
			return held;
		}).addAndGet(change);
	}

	private void count(MeterRegistry registry, List<RateLimitPolicy> policies, int outcome) {
		for (RateLimitPolicy policy : policies) {
			this.counters
				.computeIfAbsent(policy.name(), (name) -> counters(registry, name, this.plans.plan(name)))[outcome]
				.increment();
		}
	}

	/** The registry is looked up at the first decision, when every bean exists. */
	private @Nullable MeterRegistry registry() {
		if (!this.resolved) {
			this.registry = this.registries.getIfUnique();
			this.resolved = true;
		}
		return this.registry;
	}

	private static Counter[] counters(MeterRegistry registry, String policy, String plan) {
		Counter[] counters = new Counter[GIVE_BACK_FAILURE + 1];
		for (Outcome outcome : Outcome.values()) {
			counters[outcome.ordinal()] = counter(registry, policy, plan, outcome.name().toLowerCase(Locale.ROOT));
		}
		counters[STORE_FAILURE] = counter(registry, policy, plan, "store_failure");
		counters[EXEMPT] = counter(registry, policy, plan, "exempt");
		counters[GIVE_BACK_FAILURE] = counter(registry, policy, plan, "give_back_failure");
		return counters;
	}

	private static Counter counter(MeterRegistry registry, String policy, String plan, String outcome) {
		return Counter.builder(DECISIONS)
			.description("Requests decided by rate limiting")
			.tag("policy", policy)
			.tag("plan", plan)
			.tag("outcome", outcome)
			.register(registry);
	}

}
