package dev.ratelimit.spring.changes.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.spring.web.internal.CurrentLimits;
import dev.ratelimit.spring.web.internal.EndpointLimits;
import dev.ratelimit.spring.web.internal.LimitCatalog;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The changes of policies made while the application runs: a policy's limit, window and burst, validated like
 * configuration, applied to every endpoint it limits from the next request on, each key carrying the permits it
 * has in use over ({@link RateLimitStore#change}). On a store that {@link RateLimitStore#sharedChanges() shares
 * changes}, such as Redis or PostgreSQL, a change is shared with every instance of the fleet, which applies it when the store
 * tells it, and it stays there, so that an instance that starts later applies it too, until it is removed; in
 * memory it lasts until the application stops.
 * <p>
 * A change names the values it sets; the others keep theirs. A burst that equals the limit follows the limit, as
 * when none is declared, and a leaky bucket declared without delay keeps none.
 */
public final class PolicyChanges implements CurrentLimits {

	private static final Log logger = LogFactory.getLog(PolicyChanges.class);

	private final RateLimitStore store;

	/** Every endpoint's limits, each plan's too, as declared. */
	private volatile List<EndpointLimits> declared = List.of();

	/** Each policy as declared, by name. */
	private volatile Map<String, RateLimitPolicy> declaredPolicies = Map.of();

	private volatile Map<String, Change> changes = Map.of();

	/** The limits of each endpoint that a change touches, in place of its declared ones; null without changes. */
	private volatile @Nullable Map<EndpointLimits, EndpointLimits> changed;

	public PolicyChanges(RateLimitStore store) {
		this.store = store;
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * On a store that shares changes, applies the changes the fleet shares and follows them from now on.
	 */
	@Override
	public void start(Collection<EndpointLimits> endpoints) {
		List<EndpointLimits> all = new ArrayList<>();
		Map<String, RateLimitPolicy> policies = new LinkedHashMap<>();
		for (EndpointLimits limits : endpoints) {
			for (EndpointLimits planned : limits.onEveryPlan()) {
				all.add(planned);
				planned.policies().forEach((policy) -> policies.putIfAbsent(policy.name(), policy));
			}
		}
		this.declared = List.copyOf(all);
		this.declaredPolicies = Map.copyOf(policies);
		if (!policies.isEmpty()) {
			this.store.sharedChanges().ifPresent((shared) -> {
				shared.onChange(this::follow);
				follow();
			});
		}
	}

	@Override
	public EndpointLimits current(EndpointLimits limits) {
		Map<EndpointLimits, EndpointLimits> changed = this.changed;
		if (changed == null) {
			return limits;
		}
		EndpointLimits current = changed.get(limits);
		return (current != null) ? current : limits;
	}

	/** The names of every policy, sorted. */
	public Set<String> names() {
		return new TreeSet<>(this.declaredPolicies.keySet());
	}

	/** The policy of that name as declared, or null if no endpoint has one of that name. */
	public @Nullable RateLimitPolicy declared(String name) {
		return this.declaredPolicies.get(name);
	}

	/** The change in effect for the policy of that name, or null. */
	public @Nullable Change change(String name) {
		return this.changes.get(name);
	}

	/** The policy of that name as it applies now. */
	public RateLimitPolicy current(String name) {
		Change change = this.changes.get(name);
		return (change != null) ? change.policy() : policy(name);
	}

	/**
	 * Changes the policy of that name: the values given, the others as they are now.
	 * @throws IllegalArgumentException naming the value that is not one the policy can take; nothing changes
	 * @throws IllegalStateException if the store's server did not store the change; nothing changes
	 */
	public synchronized RateLimitPolicy change(String name, @Nullable Long limit, @Nullable String window,
			@Nullable Long burst) {
		RateLimitPolicy current = current(name);
		Duration newWindow = (window != null) ? parseWindow(window) : current.window();
		long newLimit = (limit != null) ? limit : current.limit();
		RateLimitPolicy next = with(current, newLimit, newWindow, burst);
		// a store refuses values it cannot decide exactly when it first decides them: now, not at a request
		this.store.limiter(next);
		this.store.sharedChanges().ifPresent((shared) -> shared.share(name, RateLimitStore.SharedChange.of(next)));
		apply(name, next);
		logger.info("Rate limit '" + name + "' changed at runtime to " + LimitCatalog.describe(next));
		return next;
	}

	/**
	 * Removes the change of the policy of that name: its declared values apply again.
	 * @throws IllegalStateException if the store's server did not remove it; nothing changes
	 */
	public synchronized RateLimitPolicy remove(String name) {
		RateLimitPolicy declared = policy(name);
		this.store.sharedChanges().ifPresent((shared) -> shared.share(name, null));
		apply(name, declared);
		logger.info("Rate limit '" + name + "' back to its declared " + LimitCatalog.describe(declared));
		return declared;
	}

	/** Applies what the fleet shares now, when the store shares changes and the limits are known. */
	void follow() {
		RateLimitStore.SharedChanges shared = this.store.sharedChanges().orElse(null);
		if (shared != null && !this.declaredPolicies.isEmpty()) {
			try {
				follow(shared);
			}
			catch (IllegalStateException ex) {
				logger.warn("Could not read the runtime changes of rate limits that the fleet shares ("
						+ ex.getMessage() + "); they apply at the store's next heartbeat that its server answers");
			}
		}
	}

	/** Applies what the fleet shares, policy by policy. */
	private synchronized void follow(RateLimitStore.SharedChanges fleet) {
		Map<String, RateLimitStore.SharedChange> shared = fleet.read(this.declaredPolicies.keySet());
		for (RateLimitPolicy declared : this.declaredPolicies.values()) {
			RateLimitStore.SharedChange change = shared.get(declared.name());
			RateLimitPolicy target = declared;
			if (change != null) {
				try {
					target = with(declared, change.limit(), change.window(), change.burst());
				}
				catch (IllegalArgumentException ex) {
					logger.warn("Ignoring the runtime change of rate limit '" + declared.name()
							+ "' that the fleet shares: " + ex.getMessage());
					continue;
				}
			}
			if (!target.equals(current(declared.name()))) {
				apply(declared.name(), target);
				logger.info("Rate limit '" + declared.name() + "' "
						+ ((change != null) ? "changed by the fleet to " : "back to its declared ")
						+ LimitCatalog.describe(target));
			}
		}
	}

	private void apply(String name, RateLimitPolicy next) {
		RateLimitPolicy current = current(name);
		if (!next.equals(current)) {
			this.store.change(current, next);
		}
		Map<String, Change> changes = new LinkedHashMap<>(this.changes);
		if (next.equals(policy(name))) {
			changes.remove(name);
		}
		else {
			changes.put(name, new Change(next, Instant.now()));
		}
		this.changes = Map.copyOf(changes);
		this.changed = substitutes(changes);
	}

	/** The limits of every endpoint that a change touches, with the changed policies at their own costs. */
	private @Nullable Map<EndpointLimits, EndpointLimits> substitutes(Map<String, Change> changes) {
		if (changes.isEmpty()) {
			return null;
		}
		Map<EndpointLimits, EndpointLimits> substitutes = new IdentityHashMap<>();
		for (EndpointLimits limits : this.declared) {
			List<RateLimitPolicy> policies = new ArrayList<>(limits.policies().size());
			boolean touched = false;
			for (RateLimitPolicy policy : limits.policies()) {
				Change change = changes.get(policy.name());
				touched |= change != null;
				policies.add((change != null) ? change.policy().withCost(policy.cost()) : policy);
			}
			if (touched) {
				substitutes.put(limits, limits.withPolicies(policies));
			}
		}
		return substitutes;
	}

	private RateLimitPolicy policy(String name) {
		RateLimitPolicy policy = this.declaredPolicies.get(name);
		if (policy == null) {
			throw new IllegalArgumentException("No rate limit policy is named '" + name + "'; the policies are "
					+ String.join(", ", names()));
		}
		return policy;
	}

	/** {@code policy} with the given values; a burst equal to the limit follows the limit unless given. */
	private static RateLimitPolicy with(RateLimitPolicy policy, long limit, Duration window, @Nullable Long burst) {
		return (burst != null) ? policy.withLimit(limit, window, burst) : policy.withLimit(limit, window);
	}

	private static Duration parseWindow(String window) {
		try {
			return RateLimitPolicy.parseWindow(window);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("window " + ex.getMessage(), ex);
		}
	}

	/** A policy as a runtime change made it, and when. */
	public record Change(RateLimitPolicy policy, Instant at) {
	}

}
