package dev.ratelimit.core.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;

/**
 * The listeners of a store's failures: each is told of every decision its failure policy made and of every
 * give-back its server did not carry out; one that throws is written in the {@link FailureLog} and the others
 * are told all the same.
 */
public final class FailureListeners {

	private final List<RateLimitStore.FailureListener> listeners = new CopyOnWriteArrayList<>();

	private final FailureLog log;

	/**
	 * Creates the listeners of one store.
	 * @param log where a listener that throws is written
	 */
	public FailureListeners(FailureLog log) {
		this.log = log;
	}

	/**
	 * Adds a listener.
	 * @param listener the listener
	 */
	public void add(RateLimitStore.FailureListener listener) {
		this.listeners.add(listener);
	}

	/**
	 * Tells every listener that the failure policy decided a request of {@code policies}.
	 * @param policies the policies of the request
	 * @param cause why the server did not decide it
	 */
	public void decided(List<RateLimitPolicy> policies, Throwable cause) {
		for (RateLimitStore.FailureListener listener : this.listeners) {
			try {
				listener.onFailure(policies, cause);
			}
			catch (RuntimeException ex) {
				this.log.listenerFailed(ex);
			}
		}
	}

	/**
	 * Tells every listener that the server did not take back the permits of {@code policies}.
	 * @param policies the policies whose permits stay taken
	 * @param cause why the server did not take them back
	 */
	public void giveBackFailed(List<RateLimitPolicy> policies, Throwable cause) {
		for (RateLimitStore.FailureListener listener : this.listeners) {
			try {
				listener.onGiveBackFailure(policies, cause);
			}
			catch (RuntimeException ex) {
				this.log.listenerFailed(ex);
			}
		}
	}

	/**
	 * Returns the policies of a request's limits, in order.
	 * @param limits the limits
	 * @return their policies
	 */
	public static List<RateLimitPolicy> policies(List<KeyedPolicy> limits) {
		List<RateLimitPolicy> policies = new ArrayList<>(limits.size());
		for (KeyedPolicy limit : limits) {
			policies.add(limit.policy());
		}
		return policies;
	}

}
