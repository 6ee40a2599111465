package dev.ratelimit.spring;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

/**
 * Tells which plan a request's client is on, for limits that declare {@link RateLimited#plans() plans}: the
 * application's one bean of this type answers for every such limit.
 * <p>
 * Derive the plan from what the application trusts, such as the authenticated principal or an API key it has
 * looked up, not from a header the client could set to any plan. A client the application does not recognise
 * gets {@code null}: its requests are then keyed by the client's address under the declaration's own limits,
 * whatever key the declaration names, so that an API key the client invents buys no quota of its own. A
 * recognised client without a plan gets {@link #NO_PLAN}: the declaration's own limits under its own key.
 * Plans match ignoring case and every character but letters and digits. It runs before the handler's arguments
 * are resolved, on the thread serving the request, and must be thread-safe; if it throws, the client counts as
 * unrecognised.
 */
@FunctionalInterface
public interface PlanResolver {

	/** The plan of a recognised client on the declaration's own limits. */
	String NO_PLAN = "";

	/**
	 * Returns the plan of {@code request}.
	 * @param request the request being limited
	 * @return the plan; {@link #NO_PLAN} for the declaration's own limits; {@code null} for a client the
	 * application does not recognise, keyed by its address
	 */
	@Nullable String resolve(HttpServletRequest request);

}
