package dev.ratelimit.spring.web.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.spring.observability.internal.PolicyPlans;
import org.jspecify.annotations.Nullable;

/**
 * The limits applying together to one endpoint, ready for the hot path: nothing is parsed or looked up per
 * request. Its enforced policies are decided as one stack, and its policies in shadow mode as another, after
 * them.
 *
 * @param policies the stacked policies, at least one, with distinct names
 * @param shadow whether each policy is in shadow mode, in the order of the policies
 * @param origins where each policy was declared and overridden, in the order of the policies, for the startup
 * log
 * @param keySpecs each policy's key as declared, such as {@code ip} or {@code global}, for the startup log
 * @param keys computes the key each policy is decided under, in the order of the policies; policies declared
 * with the same key share one source, computed once per request
 * @param address the client address as the endpoint keys it, which a key falls back to
 * @param exemption when a request is exempt from the endpoint's limits
 * @param counted which outcomes of a request count against the limits
 * @param plan the plan these limits are of, {@link #NO_PLAN} for the declarations' own
 * @param plans the limits of the endpoint on each plan, null when its declarations have no plans or for the
 * limits of one plan
 * @param costs computes each policy's cost per request, in the order of the policies; null for a policy of a
 * constant cost
 * @param resolvers the application's resolver beans these limits consult, which a stack that can only ask
 * them asynchronously asks before deciding
 * @param inFlight how many of a client's requests may be in flight at once under each policy, in the order of the
 * policies; 0 for a policy without such a limit
 * @param enforced the policies that are enforced
 * @param shadowed the policies in shadow mode
 */
public record EndpointLimits(List<RateLimitPolicy> policies, List<Boolean> shadow, List<String> origins,
		List<String> keySpecs, List<KeySource> keys, AddressKey address, Exemption exemption, CountedOutcomes counted,
		String plan, @Nullable EndpointPlans plans, List<@Nullable RequestCost> costs, List<Object> resolvers,
		List<Long> inFlight, Stack enforced, Stack shadowed) {

	/** The plan of the limits that requests without a plan get. */
	public static final String NO_PLAN = PolicyPlans.NO_PLAN;

	EndpointLimits(List<RateLimitPolicy> policies, List<Boolean> shadow, List<String> origins, List<String> keySpecs,
			List<KeySource> keys, AddressKey address, Exemption exemption, CountedOutcomes counted, String plan,
			@Nullable EndpointPlans plans, List<@Nullable RequestCost> costs, List<Object> resolvers,
			List<Long> inFlight) {
		this(List.copyOf(policies), List.copyOf(shadow), List.copyOf(origins), List.copyOf(keySpecs), List.copyOf(keys),
				address, exemption, counted, plan, plans, Collections.unmodifiableList(new ArrayList<>(costs)),
				List.copyOf(resolvers), List.copyOf(inFlight), Stack.of(policies, shadow, false),
				Stack.of(policies, shadow, true));
	}

	/**
	 * Returns the limits of the plan of {@code request}, as {@code current} says they are in force now: these,
	 * unless the endpoint has plans.
	 */
	EndpointLimits forPlanOf(LimitedRequest request, CurrentLimits current) {
		return (this.plans != null) ? this.plans.select(request, this, current) : current.current(this);
	}

	/**
	 * Returns the {@code index}-th policy at the cost of {@code request}, and with its wait.
	 * @throws RequestCost.InvalidCost if the request's cost is not one the policy can take
	 */
	RateLimitPolicy policy(int index, LimitedRequest request, Map<String, String> uriVariables) {
		RequestCost cost = this.costs.get(index);
		RateLimitPolicy policy = this.policies.get(index);
		RateLimitPolicy costed = (cost != null) ? cost.policy(policy, request, uriVariables) : policy;
		Duration maxWait = request.maxWait();
		return maxWait.isZero() ? costed : costed.withMaxWait(maxWait);
	}

	/**
	 * Returns whether deciding these limits may read the authenticated principal: a {@code user} key, or a key,
	 * cost or exemption expression that names {@code #principal}. A stack that can only learn the principal
	 * asynchronously, and at a cost, asks for it only then.
	 */
	public boolean readsPrincipal() {
		return this.keySpecs.stream()
			.anyMatch((spec) -> spec.equals(KeySource.USER) || KeySource.mayRead(spec, KeySource.PRINCIPAL))
				|| this.costs.stream()
					.anyMatch((cost) -> cost != null && KeySource.mayRead(cost.text(), KeySource.PRINCIPAL))
				|| this.exemption.mayRead(KeySource.PRINCIPAL);
	}

	/** Returns whether a policy of these limits bounds the requests in flight, which are taken only then. */
	boolean limitsInFlight() {
		for (int i = 0; i < this.inFlight.size(); i++) {
			if (this.inFlight.get(i) > 0) {
				return true;
			}
		}
		return false;
	}

	/** Returns these limits, then those of each plan. */
	public List<EndpointLimits> onEveryPlan() {
		List<EndpointLimits> all = new ArrayList<>();
		all.add(this);
		if (this.plans != null) {
			all.addAll(this.plans.limits());
		}
		return all;
	}

	/** Returns these limits on {@code plan}, with its policies. */
	EndpointLimits onPlan(String plan, List<RateLimitPolicy> policies) {
		return new EndpointLimits(policies, this.shadow, this.origins, this.keySpecs, this.keys, this.address,
				this.exemption, this.counted, plan, null, this.costs, this.resolvers, this.inFlight);
	}

	/** Returns these limits with {@code policies} in place of theirs, in the same order. */
	public EndpointLimits withPolicies(List<RateLimitPolicy> policies) {
		return new EndpointLimits(policies, this.shadow, this.origins, this.keySpecs, this.keys, this.address,
				this.exemption, this.counted, this.plan, this.plans, this.costs, this.resolvers, this.inFlight);
	}

	/**
	 * Returns these limits with every policy keyed by the client's address, for a client its plan resolver does
	 * not recognise.
	 */
	EndpointLimits underClientAddress() {
		KeySource address = KeySource.clientAddress(this.address);
		return new EndpointLimits(this.policies, this.shadow, this.origins,
				Collections.nCopies(this.keySpecs.size(), KeySource.IP), Collections.nCopies(this.keys.size(), address),
				this.address, this.exemption, this.counted, this.plan, null, this.costs, this.resolvers, this.inFlight);
	}

	/** Returns these limits with the limits of each plan. */
	EndpointLimits withPlans(EndpointPlans plans) {
		return new EndpointLimits(this.policies, this.shadow, this.origins, this.keySpecs, this.keys, this.address,
				this.exemption, this.counted, this.plan, plans, this.costs, this.resolvers, this.inFlight);
	}

	/**
	 * Policies of an endpoint decided together: its enforced ones, or those in shadow mode.
	 *
	 * @param indices the index of each policy among the endpoint's
	 * @param policies the policies, in the order of the endpoint's
	 * @param policyHeader the {@code RateLimit-Policy} members of the policies
	 */
	record Stack(List<Integer> indices, List<RateLimitPolicy> policies, String policyHeader) {

		static Stack of(List<RateLimitPolicy> all, List<Boolean> shadow, boolean inShadow) {
			List<Integer> indices = new ArrayList<>();
			List<RateLimitPolicy> policies = new ArrayList<>();
			for (int i = 0; i < all.size(); i++) {
				if (shadow.get(i) == inShadow) {
					indices.add(i);
					policies.add(all.get(i));
				}
			}
			return new Stack(List.copyOf(indices), List.copyOf(policies), RateLimitHeaders.policy(policies));
		}

		boolean isEmpty() {
			return this.indices.isEmpty();
		}

	}

}
