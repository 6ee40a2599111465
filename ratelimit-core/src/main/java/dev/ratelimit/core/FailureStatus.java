package dev.ratelimit.core;

import java.time.Duration;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * How a store's {@link FailurePolicy} stands at one instant, as its {@link RateLimitStore#failures() failures}
 * report it: whether it decides every request because the store's server, such as Redis, is failing, and since
 * how long, for which part of the key space, and how many decisions it has made.
 *
 * @param failurePolicy what decides when the server does not
 * @param failingFor how long the failure policy has decided every request, since the store found its server
 * failing; null while the server decides
 * @param decisions decisions the failure policy made since the store was built, during outages and for single
 * calls that the server did not answer in time
 * @param decisionsDuringOutage decisions the failure policy made during the current outage; 0 while the server
 * decides
 * @param failingPart the part of the key space whose requests the failure policy decides, where only a part of
 * the server fails, such as {@code "slots 0-5460"} of a Redis Cluster; null where the whole key space is, or none
 */
public record FailureStatus(FailurePolicy failurePolicy, @Nullable Duration failingFor, long decisions,
		long decisionsDuringOutage, @Nullable String failingPart) {

	/**
	 * Creates a status, checking that the counts are consistent.
	 * @param failurePolicy what decides when the server does not
	 * @param failingFor how long the server has been failing, or null
	 * @param decisions decisions made since the store was built
	 * @param decisionsDuringOutage decisions made during the current outage
	 * @param failingPart the part of the key space whose requests the failure policy decides, or null
	 */
	public FailureStatus {
		Objects.requireNonNull(failurePolicy, "failurePolicy must not be null");
		if (failingFor != null && failingFor.isNegative()) {
			throw new IllegalArgumentException("failingFor must not be negative, was " + failingFor);
		}
		if (failingFor == null && failingPart != null) {
			throw new IllegalArgumentException("failingPart must be null while the server decides, was " + failingPart);
		}
		if (decisionsDuringOutage < 0 || decisions < decisionsDuringOutage
				|| (failingFor == null && decisionsDuringOutage != 0)) {
			throw new IllegalArgumentException("decisionsDuringOutage must be between 0 and decisions (" + decisions
					+ "), and 0 without an outage, was " + decisionsDuringOutage);
		}
	}

	/**
	 * Creates a status of a store whose key space fails as one.
	 * @param failurePolicy what decides when the server does not
	 * @param failingFor how long the server has been failing, or null
	 * @param decisions decisions made since the store was built
	 * @param decisionsDuringOutage decisions made during the current outage
	 */
	public FailureStatus(FailurePolicy failurePolicy, @Nullable Duration failingFor, long decisions,
			long decisionsDuringOutage) {
		this(failurePolicy, failingFor, decisions, decisionsDuringOutage, null);
	}

	/**
	 * Returns whether the failure policy decides every request, or every request of {@link #failingPart()},
	 * because the server, or that part of it, is failing.
	 * @return whether an outage is in effect
	 */
	public boolean failing() {
		return this.failingFor != null;
	}

}
