package dev.ratelimit.sample;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Reads the {@code ratelimit.decisions} counters of the application under test.
 */
final class Decisions {

	private Decisions() {
	}

	/** Returns how many requests {@code policy} decided with {@code outcome}, 0 before its first decision. */
	static long count(MeterRegistry registry, String policy, String outcome) {
		Counter counter = registry.find("ratelimit.decisions").tags("policy", policy, "outcome", outcome).counter();
		return (counter != null) ? Math.round(counter.count()) : 0;
	}

}
