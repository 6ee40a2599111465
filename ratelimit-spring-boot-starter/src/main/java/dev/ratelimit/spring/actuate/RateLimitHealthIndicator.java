package dev.ratelimit.spring.actuate;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Locale;

import dev.ratelimit.core.FailureStatus;
import dev.ratelimit.core.RateLimitStore;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The {@code ratelimit} health contributor: which store decides and, on a store whose state lives in a server,
 * such as Redis, whether the server answers or the failure policy decides every request (under the store's name:
 * {@code "redis": "failing"}), since when, how many decisions the failure policy made, and how many instances
 * share the store. It is UP while the failure policy decides, since requests are still decided, unless
 * {@code ratelimit.health.down-when-failing} makes it DOWN.
 */
public final class RateLimitHealthIndicator implements HealthIndicator {

	private final RateLimitStore store;

	private final String storeName;

	private final boolean downWhenFailing;

	public RateLimitHealthIndicator(RateLimitStore store, String storeName, boolean downWhenFailing) {
		this.store = store;
		this.storeName = storeName;
		this.downWhenFailing = downWhenFailing;
	}

	@Override
	public Health health() {
		Health.Builder health = Health.up().withDetail("store", this.storeName);
		RateLimitStore.Failures failures = this.store.failures().orElse(null);
		if (failures != null) {
			FailureStatus status = failures.status();
			Duration failingFor = status.failingFor();
			health.withDetail(this.storeName, (failingFor != null) ? "failing" : "answering")
				.withDetail("failurePolicy", status.failurePolicy().name().toLowerCase(Locale.ROOT))
				.withDetail("failurePolicyDecisions", status.decisions());
			this.store.fleet().ifPresent((fleet) -> health.withDetail("fleetInstances", fleet.size()));
			if (failingFor != null) {
				health
					.withDetail("failingSince", Instant.now().minus(failingFor).truncatedTo(ChronoUnit.MILLIS).toString())
					.withDetail("failurePolicyDecisionsDuringOutage", status.decisionsDuringOutage());
				if (status.failingPart() != null) {
					health.withDetail("failingPart", status.failingPart());
				}
				if (this.downWhenFailing) {
					health.down();
				}
			}
		}
		return health.build();
	}

}
