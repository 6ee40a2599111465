package dev.ratelimit.spring.actuate;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailureStatus;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.spring.changes.internal.PolicyChanges;
import dev.ratelimit.spring.web.internal.EndpointLimits;
import dev.ratelimit.spring.web.internal.Keys;
import dev.ratelimit.spring.web.internal.ClientLimits;
import dev.ratelimit.spring.web.internal.LimitCatalog;
import dev.ratelimit.spring.web.internal.RateLimitHeaders;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.Selector.Match;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * The {@code ratelimit} Actuator endpoint: every policy with its effective values and where they come from,
 * the state of one key without consuming anything, a key's reset to its full quota, and changes of a policy's
 * limit, window and burst while the application runs. Over the web, at {@code /actuator/ratelimit}:
 * <ul>
 * <li>{@code GET /actuator/ratelimit}: the store and every policy; {@code GET /actuator/ratelimit/{policy}}:
 * one policy;</li>
 * <li>{@code GET /actuator/ratelimit/{policy}/{key}}: the key's state, as the {@code RateLimit} headers would
 * tell it, taking nothing; {@code DELETE} of the same path resets the key under the policy;</li>
 * <li>{@code POST /actuator/ratelimit/{policy}} with any of {@code limit}, {@code window} and {@code burst}:
 * changes the policy from the next request on, validated like configuration (a value it cannot take is a 400
 * naming it, and nothing changes); {@code DELETE /actuator/ratelimit/{policy}} removes the change.</li>
 * </ul>
 * A key is written as the store knows it: {@code ip:203.0.113.7}, {@code user:alice}, {@code global}, and so on.
 * On the Redis store, a reset and a change reach every instance of the fleet, and a change stays in Redis, for
 * instances that start later, until it is removed; in memory a change lasts until the application stops. Like
 * every endpoint, it is exposed over the web only when {@code management.endpoints.web.exposure.include} names
 * it, and it should be secured like any other. Over the web, {@link RateLimitEndpointWebExtension} answers a
 * request it cannot carry out with a status and a problem body that says why.
 */
@Endpoint(id = RateLimitEndpoint.ID)
public final class RateLimitEndpoint {

	/** The endpoint's id, under which Actuator's properties name it. */
	public static final String ID = "ratelimit";

	private final LimitCatalog catalog;

	private final PolicyChanges changes;

	private final RateLimitStore store;

	private final String storeName;

	private final @Nullable ClientLimits clientLimits;

	/**
	 * Creates the endpoint.
	 * @param catalog every endpoint's limits
	 * @param changes the runtime changes
	 * @param store the store
	 * @param storeName the store's name, as {@code ratelimit.store} says it
	 * @param clientLimits the limits of each client from the application's records, or null
	 */
	public RateLimitEndpoint(LimitCatalog catalog, PolicyChanges changes, RateLimitStore store, String storeName,
			@Nullable ClientLimits clientLimits) {
		this.catalog = catalog;
		this.changes = changes;
		this.store = store;
		this.storeName = storeName;
		this.clientLimits = clientLimits;
	}

	/**
	 * Returns the store and every policy.
	 * @return the store and the policies, by name
	 */
	@ReadOperation
	public RateLimits rateLimits() {
		Map<String, PolicyDescriptor> policies = new LinkedHashMap<>();
		for (String name : this.changes.names()) {
			policies.put(name, describe(name));
		}
		return new RateLimits(store(), policies);
	}

	/**
	 * Returns one policy.
	 * @param policy the policy's name
	 * @return the policy, or null (404) if none has that name
	 */
	@ReadOperation
	public @Nullable PolicyDescriptor policy(@Selector String policy) {
		return (this.changes.declared(policy) != null) ? describe(policy) : null;
	}

	/**
	 * Returns the state of a key under a policy, taking nothing: what a request of one permit would be answered.
	 * @param policy the policy's name
	 * @param key the key, as the store knows it
	 * @return its state, or null (404) if no policy has that name
	 */
	@ReadOperation
	public @Nullable KeyState key(@Selector String policy, @Selector(match = Match.ALL_REMAINING) String[] key) {
		if (this.changes.declared(policy) == null) {
			return null;
		}
		return inspect(policy, storeKey(policy, key));
	}

	/**
	 * Resets a key to its full quota under a policy, on every instance of a fleet.
	 * @param policy the policy's name
	 * @param key the key, as the store knows it
	 * @return its state after the reset
	 */
	@DeleteOperation
	public KeyState reset(@Selector String policy, @Selector(match = Match.ALL_REMAINING) String[] key) {
		String client = storeKey(policy, key);
		this.store.reset(client, of(policy, client));
		return inspect(policy, client);
	}

	/**
	 * Changes a policy's limit, window and burst, any of them, from the next request on. A key keeps the permits
	 * it has in use.
	 * @param policy the policy's name
	 * @param limit the new limit, or null to keep it
	 * @param window the new window, such as {@code 10s} or {@code PT1M}, or null to keep it
	 * @param burst the new burst, or null to keep it (a burst equal to the limit follows the limit)
	 * @return the policy as changed
	 */
	@WriteOperation
	public PolicyDescriptor change(@Selector String policy, @Nullable Long limit, @Nullable String window,
			@Nullable Long burst) {
		current(policy);
		if (limit == null && window == null && burst == null) {
			throw new InvalidEndpointRequestException("Give any of limit, window and burst to change policy '"
					+ policy + "'", "No value to change");
		}
		try {
			this.changes.change(policy, limit, window, burst);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidEndpointRequestException("Policy '" + policy + "' cannot take that change: "
					+ ex.getMessage(), ex.getMessage());
		}
		return describe(policy);
	}

	/**
	 * Removes the change of a policy: its declared values apply again from the next request on.
	 * @param policy the policy's name
	 * @return the policy as declared
	 */
	@DeleteOperation
	public PolicyDescriptor removeChange(@Selector String policy) {
		current(policy);
		this.changes.remove(policy);
		return describe(policy);
	}

	private RateLimitPolicy current(String policy) {
		if (this.changes.declared(policy) == null) {
			throw new NoSuchPolicy("No rate limit policy is named '" + policy + "'; the policies are "
					+ String.join(", ", this.changes.names()));
		}
		return this.changes.current(policy);
	}

	private KeyState inspect(String policy, String key) {
		RateLimitPolicy current = of(policy, key);
		Decision decision = this.store.inspect(key, current);
		return new KeyState(policy, key, decision.allowed(), decision.limit(), window(current), decision.remaining(),
				RateLimitHeaders.seconds(decision.retryAfterNanos()), RateLimitHeaders.seconds(decision.resetAfterNanos()));
	}

	/** The policy of that name as it applies to {@code key} now: the client's own, if it has limits of its own. */
	private RateLimitPolicy of(String policy, String key) {
		RateLimitPolicy current = this.changes.current(policy);
		ClientLimits clientLimits = this.clientLimits;
		return (clientLimits != null) ? clientLimits.policy(key, current) : current;
	}

	/** A policy's window in ISO-8601, or its calendar window as written. */
	private static String window(RateLimitPolicy policy) {
		return (policy.calendar() != null) ? policy.calendar().toString() : policy.window().toString();
	}

	/**
	 * The key as the store knows it: segments of a key holding slashes arrive apart. On WebFlux the remaining
	 * segments start with the policy's own, which no key does: every key starts with its kind, such as
	 * {@code ip:}, and a key of no kind ({@code global}) holds no slash.
	 */
	private static String storeKey(String policy, String[] segments) {
		int from = (segments.length > 1 && segments[0].equals(policy)) ? 1 : 0;
		return Keys.safe(String.join("/", Arrays.copyOfRange(segments, from, segments.length)));
	}

	private StoreDescriptor store() {
		int fleetSize = this.store.fleet().map(RateLimitStore.Fleet::size).orElse(1);
		FailureStatus status = this.store.failures().map(RateLimitStore.Failures::status).orElse(null);
		if (status == null) {
			return new StoreDescriptor(this.storeName, true, fleetSize, null, null, 0);
		}
		return new StoreDescriptor(this.storeName, !status.failing(), fleetSize, status.failurePolicy().name(),
				(status.failingFor() != null) ? status.failingFor().toString() : null, status.decisions());
	}

	private PolicyDescriptor describe(String name) {
		RateLimitPolicy policy = this.changes.current(name);
		List<Usage> usages = new ArrayList<>();
		this.catalog.routes().forEach((limits, routes) -> {
			for (EndpointLimits planned : limits.onEveryPlan()) {
				for (int i = 0; i < planned.policies().size(); i++) {
					if (planned.policies().get(i).name().equals(name)) {
						usages.add(new Usage(routes, planned.keySpecs().get(i), planned.plan(),
								planned.shadow().get(i) ? "shadow" : "enforced",
								planned.counted().all() ? "all" : planned.counted().toString(),
								planned.origins().get(i)));
					}
				}
			}
		});
		PolicyChanges.Change change = this.changes.change(name);
		RateLimitPolicy declared = this.changes.declared(name);
		return new PolicyDescriptor(name, policy.algorithm().name(), policy.limit(), window(policy),
				policy.burst(), policy.delayAfter(),
				policy.penalty().isZero() ? null : policy.penalty().toString(), usages,
				(change != null && declared != null) ? new ChangeDescriptor(change.at(), declared.limit(),
						window(declared), declared.burst()) : null);
	}

	/** A request naming a policy that no endpoint has. */
	public static final class NoSuchPolicy extends InvalidEndpointRequestException {

		NoSuchPolicy(String message) {
			super(message, "No such policy");
		}

	}

	/**
	 * The store and every policy.
	 *
	 * @param store the store
	 * @param policies every policy, by name
	 */
	public record RateLimits(StoreDescriptor store, Map<String, PolicyDescriptor> policies) {
	}

	/**
	 * The store that keeps the keys' states.
	 *
	 * @param type {@code memory} or {@code redis}, as metrics and health name the store
	 * @param deciding whether the store decides, false while its server (Redis) fails and the failure policy
	 * decides instead
	 * @param fleetSize how many instances share the store's quotas, as the store last counted them; 1 for a store
	 * of one instance
	 * @param failurePolicy on a store with a failure policy, such as Redis, what decides when its server does not
	 * @param failingFor on such a store, how long its server has been failing, in ISO-8601; null while it answers
	 * @param failurePolicyDecisions on such a store, how many decisions the failure policy has made since the
	 * start
	 */
	public record StoreDescriptor(String type, boolean deciding, int fleetSize, @Nullable String failurePolicy,
			@Nullable String failingFor, long failurePolicyDecisions) {
	}

	/**
	 * A policy as it applies now.
	 *
	 * @param name its name
	 * @param algorithm its algorithm
	 * @param limit its limit
	 * @param window its window, in ISO-8601
	 * @param burst its burst, the limit for the window algorithms
	 * @param delayAfter for a leaky bucket, how many queued requests pass without waiting
	 * @param penalty how long a refused client stays refused, in ISO-8601; null if it has no penalty
	 * @param endpoints where it applies, each with its key and where it was declared
	 * @param change the change made while the application runs, null if none
	 */
	public record PolicyDescriptor(String name, String algorithm, long limit, String window, long burst,
			long delayAfter, @Nullable String penalty, List<Usage> endpoints, @Nullable ChangeDescriptor change) {
	}

	/**
	 * Where a policy applies.
	 *
	 * @param routes the methods and paths, such as {@code GET /demo/gcra}
	 * @param key the key it is decided under, as declared, such as {@code ip} or {@code user}
	 * @param plan the plan whose limits it is, {@code default} for the declaration's own
	 * @param mode {@code enforced}, or {@code shadow} when it is decided and counted but rejects and holds
	 * nothing
	 * @param counts which responses count against it: {@code all}, or the statuses
	 * @param declared where it was declared and overridden
	 */
	public record Usage(Set<String> routes, String key, String plan, String mode, String counts,
			String declared) {
	}

	/**
	 * The change a policy was given while the application runs, and its declared values.
	 *
	 * @param at when this instance applied it
	 * @param declaredLimit the declared limit
	 * @param declaredWindow the declared window, in ISO-8601
	 * @param declaredBurst the declared burst
	 */
	public record ChangeDescriptor(Instant at, long declaredLimit, String declaredWindow, long declaredBurst) {
	}

	/**
	 * A key's state under a policy, as the {@code RateLimit} headers would tell it.
	 *
	 * @param policy the policy
	 * @param key the key
	 * @param allowed whether a request of one permit would pass now
	 * @param limit the policy's limit for the key, its own if it has limits of its own
	 * @param window the policy's window for the key, in ISO-8601, or a calendar window as written
	 * @param remaining the permits left
	 * @param retryAfter seconds until a request would pass, rounded up; 0 when one would now
	 * @param resetAfter seconds until the key is back to its full quota, rounded up
	 */
	public record KeyState(String policy, String key, boolean allowed, long limit, String window, long remaining,
			long retryAfter, long resetAfter) {
	}

}
