package dev.ratelimit.spring.web.internal;

import java.util.List;
import java.util.Map;

import dev.ratelimit.core.Algorithm;
import org.jspecify.annotations.Nullable;

/**
 * The values of a limit as the application's configuration sets them, each null or empty where it sets none:
 * those of a {@code ratelimit.rules} entry, or those of {@code ratelimit.policies.<name>} that replace the values
 * of the {@code @RateLimited} declaration of that name. The auto-configuration maps its properties into these
 * once; the request path reads no properties class.
 *
 * @param limit permits per window
 * @param window the window, as written
 * @param algorithm the algorithm
 * @param burst the burst
 * @param delayAfter how many queued requests of a leaky bucket pass without waiting
 * @param noDelay whether a leaky bucket passes its whole queue without waiting
 * @param cost permits per request
 * @param costExpression the expression of a request's cost
 * @param plans the values of each plan, by the plan's name as written
 * @param key the key, as written
 * @param ipv6Prefix the leading bits of an IPv6 client address that identify the client
 * @param exempt the exempt networks, as written
 * @param exemptIf the exempting condition
 * @param countStatus the response statuses that count
 * @param shadow whether the limit is in shadow mode
 * @param penalty how long a refused client stays refused, as written
 * @param concurrency how many of a client's requests may be in flight at once, 0 for no such limit
 */
public record LimitValues(@Nullable Long limit, @Nullable String window, @Nullable Algorithm algorithm,
		@Nullable Long burst, @Nullable Long delayAfter, @Nullable Boolean noDelay, @Nullable Long cost,
		@Nullable String costExpression, Map<String, PlanValues> plans, @Nullable String key,
		@Nullable Integer ipv6Prefix, List<String> exempt, @Nullable String exemptIf, List<Integer> countStatus,
		@Nullable Boolean shadow, @Nullable String penalty, @Nullable Long concurrency) {

	/**
	 * The values of one plan of a limit, each null where it sets none.
	 *
	 * @param limit permits per window
	 * @param window the window, as written
	 * @param burst the burst
	 */
	public record PlanValues(@Nullable Long limit, @Nullable String window, @Nullable Long burst) {
	}

}
