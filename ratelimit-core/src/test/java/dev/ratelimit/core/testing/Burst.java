package dev.ratelimit.core.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntFunction;

/**
 * A burst of senders released at once: each runs on a thread of its own, waits until all are ready, then runs
 * its task; what they return is gathered within a bound that only makes a hung sender fail the test.
 */
final class Burst {

	private Burst() {
	}

	/**
	 * Releases the senders and gathers what each returns, in their order.
	 * @param threads where the senders run, with room for all of them at once
	 * @param senders how many senders
	 * @param sender the task of the sender of each index, from 0
	 * @param atRelease runs once every sender is ready, just before they are released
	 * @param boundSeconds how long starting and gathering the burst may take, each
	 */
	static <T> List<T> release(ExecutorService threads, int senders, IntFunction<Callable<T>> sender,
			Runnable atRelease, long boundSeconds) {
		CountDownLatch ready = new CountDownLatch(senders);
		CountDownLatch go = new CountDownLatch(1);
		List<Future<T>> futures = new ArrayList<>(senders);
		for (int i = 0; i < senders; i++) {
			Callable<T> task = sender.apply(i);
			futures.add(threads.submit(() -> {
				ready.countDown();
				go.await();
				return task.call();
			}));
		}
		try {
			if (!ready.await(boundSeconds, TimeUnit.SECONDS)) {
				throw new IllegalStateException("The request threads did not start within " + boundSeconds + " s");
			}
			atRelease.run();
			go.countDown();
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(boundSeconds);
			List<T> results = new ArrayList<>(senders);
			for (Future<T> future : futures) {
				results.add(future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
			}
			return results;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted during the burst", ex);
		}
		catch (ExecutionException | TimeoutException ex) {
			futures.forEach((future) -> future.cancel(true));
			throw new IllegalStateException("The burst did not complete within " + boundSeconds + " s", ex);
		}
	}

}
