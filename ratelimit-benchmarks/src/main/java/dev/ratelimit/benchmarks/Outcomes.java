package dev.ratelimit.benchmarks;

import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Counts denied calls per thread, reported by JMH next to the throughput as a rate, so that every result shows
 * which share of its calls was denied: a load meant to allow everything proves that it did.
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.OPERATIONS)
public class Outcomes {

	/** Denied calls in this iteration; public so that JMH reports it. */
	public long denied;

	@Setup(Level.Iteration)
	public void reset() {
		this.denied = 0;
	}

	boolean count(boolean allowed) {
		if (!allowed) {
			this.denied++;
		}
		return allowed;
	}

}
