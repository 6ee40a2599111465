package dev.ratelimit.spring;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimiter;

/**
 * The limiters of the policies an application declares, for code to decide with: those of {@link RateLimited},
 * of {@code ratelimit.rules}, and of {@code ratelimit.policies.<name>} entries that set a limit and a window
 * without any declaration, which exist for code alone. Each applies its policy as it is in force now (changed at
 * runtime through the Actuator too), in the application's store, with the metrics and shadow mode of a request's
 * limit.
 * <p>
 * A key is used as code passes it. The keys that declarations compute start with their kind ({@code ip:},
 * {@code user:}, {@code spel:}, {@code bean:}...): code shares a client's quota with a declaration by passing
 * that same key.
 */
public interface RateLimiters {

	/**
	 * Returns the limiter of a declared policy.
	 * @param policy the policy's name, in any case and punctuation, as {@code ratelimit.policies} matches names
	 * @return the limiter
	 * @throws IllegalArgumentException if no policy of that name is declared, naming those that are
	 */
	RateLimiter limiter(String policy);

	/**
	 * Takes one permit of {@code key} under a declared policy, or throws: over the limit, a
	 * {@link RateLimitExceededException}, which a web handler that lets it out answers with the 429 of a limited
	 * request.
	 * @param policy the policy's name
	 * @param key who is limited
	 * @return the decision, allowed
	 * @throws RateLimitExceededException if {@code key} is over the limit
	 * @throws IllegalArgumentException if no policy of that name is declared
	 */
	Decision acquire(String policy, String key);

}
