package dev.ratelimit.core.internal;

import java.net.ConnectException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.FailurePolicy;
import dev.ratelimit.core.FailureStatus;
import dev.ratelimit.core.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every decision that the failure policy makes once its own call found its server failing counts in the outage,
 * whichever thread began it: a request and the heartbeat failing at once must not lose a decision between the
 * switch and the outage's count.
 */
class OutageDetectorTests {

	private static final int ROUNDS = 2_000;

	private static final int THREADS = 4;

	@Test
	void countsInTheOutageEveryDecisionOfACallThatFoundItsServerFailing() throws Exception {
		for (int round = 0; round < ROUNDS; round++) {
			OutageDetector<Exception> detector = new OutageDetector<>(TimeUnit.MILLISECONDS.toNanos(100), new ManualTimeSource());
			CyclicBarrier start = new CyclicBarrier(THREADS);
			List<Thread> threads = new ArrayList<>();
			for (int t = 0; t < THREADS; t++) {
				Thread thread = new Thread(() -> {
					try {
						start.await(10, TimeUnit.SECONDS);
					}
					catch (Exception ex) {
						throw new IllegalStateException(ex);
					}
					detector.failed(new ConnectException("refused"), FailureKind.UNREACHABLE, 0);
					detector.failurePolicyDecided();
				});
				thread.start();
				threads.add(thread);
			}
			for (Thread thread : threads) {
				thread.join(TimeUnit.SECONDS.toMillis(10));
			}
			FailureStatus status = detector.status(FailurePolicy.LOCAL);
			assertThat(status.decisions()).isEqualTo(THREADS);
			assertThat(status.decisionsDuringOutage()).as("round %d", round).isEqualTo(THREADS);
		}
	}

}
