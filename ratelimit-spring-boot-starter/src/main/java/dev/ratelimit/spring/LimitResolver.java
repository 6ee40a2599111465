package dev.ratelimit.spring;

import dev.ratelimit.core.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

/**
 * Gives each client limits of its own, read from the application's records (a customer's row, a billing
 * system), beside or instead of plans declared in advance: the application's one bean of this type answers for
 * every limit, on requests and on method calls alike.
 * <p>
 * It is asked with the key that the limit computed for the request or call, as the store and the Actuator know
 * it, with its kind: {@code user:alice} for {@code key = "user"}, {@code spel:acme} for {@code key =
 * "#customer"}; and with the declared policy, as a runtime change left it. It returns that policy
 * with the client's values, typically {@link RateLimitPolicy#withLimit(long, java.time.Duration)
 * declared.withLimit(limit, window)}, or {@code null} for the declared limits. Its answer is kept for
 * {@code ratelimit.limit-resolver-ttl} (a minute unless set) per client and policy, so that a changed record
 * applies within that time without a restart, and the records are not read on every request.
 * <p>
 * The policy it returns must keep the declared policy's name: the client's state, headers and metrics are
 * the policy's. A policy that the store cannot decide exactly, another name, or an exception is logged at WARN,
 * at most once a minute, and the client is decided by the declared limits. A client whose limits change keeps
 * what it took in the current window only where the store keeps states by name (Redis); in memory it starts
 * afresh under its new limits. It runs on the thread that decides the request, and must be thread-safe.
 */
@FunctionalInterface
public interface LimitResolver {

	/**
	 * Returns the limits of {@code client} under {@code declared}.
	 * @param client the key that the limit computed for the request or call
	 * @param declared the declared policy, as a runtime change left it
	 * @return the client's policy, with the declared name; {@code null} for the declared limits
	 */
	@Nullable RateLimitPolicy resolve(String client, RateLimitPolicy declared);

}
