package dev.ratelimit.spring.web.internal;

import java.util.Collection;

/**
 * The limits that apply to an endpoint now: as declared, or as an operator changed them while the application
 * runs. The catalog tells it every endpoint's declared limits once it knows them.
 */
public interface CurrentLimits {

	/**
	 * Starts from the declared limits of every endpoint, each plan's too, once they are known.
	 * @param endpoints the declared limits of every endpoint
	 */
	void start(Collection<EndpointLimits> endpoints);

	/**
	 * Returns the limits that apply now to an endpoint whose declared limits are {@code declared}.
	 * @param declared the endpoint's declared limits, or those of one of its plans
	 * @return the limits in force
	 */
	EndpointLimits current(EndpointLimits declared);

}
