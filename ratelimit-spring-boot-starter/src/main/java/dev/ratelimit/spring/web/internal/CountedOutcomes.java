package dev.ratelimit.spring.web.internal;

import java.util.Collection;
import java.util.Set;
import java.util.TreeSet;

import dev.ratelimit.spring.RateLimitConfigurationException;
import org.jspecify.annotations.Nullable;

/**
 * Which outcomes of a request count against its limits: every outcome, or only the responses of some
 * statuses, such as 401 and 403 to limit failed logins. A request is refused before it runs only if its client
 * is over the limit already; its permits are taken once it has ended, if its status counts.
 */
public final class CountedOutcomes {

	/** Every request counts. */
	static final CountedOutcomes ALL = new CountedOutcomes(new TreeSet<>());

	private final TreeSet<Integer> statuses;

	private CountedOutcomes(TreeSet<Integer> statuses) {
		this.statuses = statuses;
	}

	/**
	 * Returns the outcomes of {@code statuses}, {@link #ALL} when empty.
	 * @throws RateLimitConfigurationException naming {@code property} if a status is no HTTP status
	 */
	static CountedOutcomes of(String property, String action, Collection<Integer> statuses) {
		TreeSet<Integer> checked = new TreeSet<>();
		for (Integer status : statuses) {
			if (status == null || status < 100 || status > 599) {
				throw new RateLimitConfigurationException("Invalid " + property + ": " + status
						+ " is not an HTTP status, from 100 to 599.", action);
			}
			checked.add(status);
		}
		return checked.isEmpty() ? ALL : new CountedOutcomes(checked);
	}

	/** Whether every request counts, so that none is ever given back. */
	public boolean all() {
		return this.statuses.isEmpty();
	}

	/** Whether a request that ended with {@code status} counts. */
	boolean counts(int status) {
		return this.statuses.isEmpty() || this.statuses.contains(status);
	}

	Set<Integer> statuses() {
		return this.statuses;
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return (this == other) || (other instanceof CountedOutcomes that && this.statuses.equals(that.statuses));
	}

	@Override
	public int hashCode() {
		return this.statuses.hashCode();
	}

	@Override
	public String toString() {
		return this.statuses.isEmpty() ? "every request" : "responses " + this.statuses;
	}

}
