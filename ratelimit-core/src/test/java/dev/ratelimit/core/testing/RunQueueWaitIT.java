package dev.ratelimit.core.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The run-queue wait is the calling thread's own and grows when more threads want a CPU than there are: four
 * spinning threads per core must each wait for one.
 */
class RunQueueWaitIT {

	@Test
	void countsTheTimeEachThreadWaitedForACpu() throws Exception {
		assumeTrue(Files.isReadable(Path.of("/proc/thread-self/schedstat")), "the kernel tells no run-queue wait");
		int spinners = 4 * Runtime.getRuntime().availableProcessors();
		List<Thread> threads = new ArrayList<>();
		List<AtomicLong> waits = new ArrayList<>();
		for (int i = 0; i < spinners; i++) {
			AtomicLong wait = new AtomicLong(-1);
			waits.add(wait);
			Thread thread = new Thread(() -> {
				long before = RunQueueWait.nanos();
				long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
				while (System.nanoTime() < end) {
					Thread.onSpinWait();
				}
				wait.set(RunQueueWait.nanos() - before);
			});
			thread.start();
			threads.add(thread);
		}
		for (Thread thread : threads) {
			thread.join(TimeUnit.SECONDS.toMillis(10));
		}
		long total = waits.stream().mapToLong(AtomicLong::get).sum();
		assertThat(waits).allSatisfy((wait) -> assertThat(wait.get()).isNotNegative());
		// three of every four spinners are off a CPU at any time: their wait adds up to most of their run
		assertThat(total).isGreaterThan(spinners * TimeUnit.MILLISECONDS.toNanos(300) / 4);
	}

}
