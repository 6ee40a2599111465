package dev.ratelimit.spring.web.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntFunction;

import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.spring.LimitResolver;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The limits of each client as the application's {@link LimitResolver} gives them, each answer kept for a time
 * to live per client and policy, at most as many answers as a policy has keys in memory. An answer the store
 * cannot decide exactly, or of another name, or a resolver that throws, leaves the client on the declared
 * limits, which the log says at most once a minute.
 */
public final class ClientLimits {

	private static final Log logger = LogFactory.getLog(ClientLimits.class);

	/** How many endpoints' limits with clients' policies in place are kept, rather than made per request. */
	private static final int MAX_ENDPOINTS = 1024;

	private final LimitResolver resolver;

	private final RateLimitStore store;

	private final TimeSource time;

	private final long ttlNanos;

	private final int maxAnswers;

	private final ThrottledWarning refused;

	private final ConcurrentHashMap<Client, Answer> answers = new ConcurrentHashMap<>();

	private final ConcurrentHashMap<Endpoint, EndpointLimits> endpoints = new ConcurrentHashMap<>();

	/** When full, the instant before which no expired answer is looked for again. */
	private volatile long nextPurge;

	/**
	 * Creates the limits of clients that {@code resolver} gives.
	 * @param resolver the application's resolver
	 * @param store the store, which refuses a policy it cannot decide exactly
	 * @param time the application's clock
	 * @param ttl how long an answer is kept
	 * @param maxAnswers how many answers are kept at most
	 */
	public ClientLimits(LimitResolver resolver, RateLimitStore store, TimeSource time, Duration ttl, int maxAnswers) {
		this.resolver = resolver;
		this.store = store;
		this.time = time;
		this.ttlNanos = ttl.toNanos();
		this.maxAnswers = maxAnswers;
		this.refused = new ThrottledWarning(logger, time);
		logger.info("Limits per client: every limit asks the application's " + resolver.getClass().getSimpleName()
				+ " for the limits of each client, and keeps its answer for " + ttl);
	}

	/**
	 * Returns {@code limits} with each policy as the resolver gives it for the client that {@code keys} computes
	 * for it: {@code limits} themselves when every client is on the declared limits.
	 */
	EndpointLimits of(EndpointLimits limits, IntFunction<String> keys) {
		List<RateLimitPolicy> declared = limits.policies();
		List<RateLimitPolicy> own = null;
		for (int i = 0; i < declared.size(); i++) {
			RateLimitPolicy policy = policy(keys.apply(i), declared.get(i));
			if (policy != declared.get(i)) {
				if (own == null) {
					own = new ArrayList<>(declared);
				}
				own.set(i, policy);
			}
		}
		if (own == null) {
			return limits;
		}
		Endpoint endpoint = new Endpoint(limits, List.copyOf(own));
		EndpointLimits made = this.endpoints.get(endpoint);
		if (made == null) {
			made = limits.withPolicies(endpoint.policies);
			if (this.endpoints.size() < MAX_ENDPOINTS) {
				this.endpoints.putIfAbsent(endpoint, made);
			}
		}
		return made;
	}

	/** Returns the policy of {@code client} under {@code declared}: the resolver's answer, kept for a while. */
	public RateLimitPolicy policy(String client, RateLimitPolicy declared) {
		long now = this.time.nanoTime();
		Client asked = new Client(client, declared);
		Answer answer = this.answers.get(asked);
		if (answer != null && now - answer.until < 0) {
			return answer.policy;
		}
		RateLimitPolicy policy = resolve(client, declared);
		if (this.answers.size() >= this.maxAnswers && answer == null) {
			purge(now);
		}
		if (this.answers.size() < this.maxAnswers || answer != null) {
			this.answers.put(asked, new Answer(policy, now + this.ttlNanos));
		}
		return policy;
	}

	private RateLimitPolicy resolve(String client, RateLimitPolicy declared) {
		@Nullable RateLimitPolicy answer;
		try {
			answer = this.resolver.resolve(client, declared);
			if (answer == null || answer.equals(declared)) {
				return declared;
			}
			if (!answer.name().equals(declared.name())) {
				throw new IllegalArgumentException("its policy is named '" + answer.name() + "', not '"
						+ declared.name() + "': return declared.withLimit(limit, window)");
			}
			// a store refuses values it cannot decide exactly when it first decides them: now
			this.store.limiter(answer);
			return answer;
		}
		catch (RuntimeException ex) {
			this.refused.warn(() -> "Limits of client '" + client + "' under '" + declared.name()
					+ "' from the LimitResolver refused (" + ex.getMessage() + "): decided by the declared "
					+ LimitCatalog.describe(declared));
			return declared;
		}
	}

	/** Forgets the answers that expired, at most once a second while the answers are at their maximum. */
	private void purge(long now) {
		if (now - this.nextPurge < 0) {
			return;
		}
		this.nextPurge = now + 1_000_000_000L;
		this.answers.values().removeIf((answer) -> now - answer.until >= 0);
	}

	private record Client(String key, RateLimitPolicy declared) {
	}

	private record Answer(RateLimitPolicy policy, long until) {
	}

	/** An endpoint's limits, by identity, with some policies in place of theirs. */
	private record Endpoint(EndpointLimits limits, List<RateLimitPolicy> policies) {

		@Override
		public boolean equals(@Nullable Object other) {
			return other instanceof Endpoint that && this.limits == that.limits && this.policies.equals(that.policies);
		}

		@Override
		public int hashCode() {
			return System.identityHashCode(this.limits) * 31 + this.policies.hashCode();
		}

	}

}
