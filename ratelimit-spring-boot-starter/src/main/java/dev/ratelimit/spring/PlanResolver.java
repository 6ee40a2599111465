package dev.ratelimit.spring;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

/**
 * Tells which plan a request's client is on, for limits that declare {@link RateLimited#plans() plans}: the
 * application's one bean of this type answers for every such limit.
 * <p>
 * Derive the plan from what the application trusts, such as the authenticated principal or an API key it has
 * looked up, not from a header the client could set to any plan. Plans match ignoring case and every character
 * but letters and digits. It runs before the handler's arguments are resolved, on the thread serving the
 * request, and must be thread-safe.
 */
@FunctionalInterface
public interface PlanResolver {

	/**
	 * Returns the plan of {@code request}.
	 * @param request the request being limited
	 * @return the plan, or {@code null} for the declaration's own limits
	 */
	@Nullable String resolve(HttpServletRequest request);

}
