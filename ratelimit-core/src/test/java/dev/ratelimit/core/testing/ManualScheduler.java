package dev.ratelimit.core.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import dev.ratelimit.core.ManualTimeSource;

/**
 * A {@link ScheduledExecutorService} on a {@link ManualTimeSource}: a task runs when a test moves the time to
 * its instant, on the test's thread, never by itself. Tests of traffic shaping give it the limiter's clock, so
 * that a held request is released exactly at the slot the limiter gave it, without sleeping.
 * <p>
 * Tasks due at the same instant run in the order they were scheduled. Periodic tasks are not supported.
 */
public final class ManualScheduler extends AbstractExecutorService implements ScheduledExecutorService {

	private final ManualTimeSource time;

	private final PriorityQueue<Task<?>> tasks = new PriorityQueue<>();

	private long sequence;

	private boolean shutdown;

	/**
	 * Creates a scheduler on the given clock.
	 * @param time the clock that decides when tasks are due, shared with the limiter
	 */
	public ManualScheduler(ManualTimeSource time) {
		this.time = time;
	}

	@Override
	public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
		return enqueue(Executors.callable(command), delay, unit);
	}

	@Override
	public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
		return enqueue(callable, delay, unit);
	}

	@Override
	public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
		throw new UnsupportedOperationException("ManualScheduler runs one-shot tasks only");
	}

	@Override
	public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay,
			TimeUnit unit) {
		throw new UnsupportedOperationException("ManualScheduler runs one-shot tasks only");
	}

	@Override
	public void execute(Runnable command) {
		schedule(command, 0, TimeUnit.NANOSECONDS);
	}

	private synchronized <V> ScheduledFuture<V> enqueue(Callable<V> callable, long delay, TimeUnit unit) {
		if (this.shutdown) {
			throw new RejectedExecutionException("ManualScheduler is shut down");
		}
		Task<V> task = new Task<>(callable, this.time.nanoTime() + unit.toNanos(Math.max(0, delay)),
				this.sequence++);
		this.tasks.add(task);
		notifyAll();
		return task;
	}

	/**
	 * Returns how many tasks wait for their instant.
	 * @return the number of pending tasks
	 */
	public synchronized int pending() {
		return this.tasks.size();
	}

	/**
	 * Returns how long each pending task still waits, soonest first.
	 * @return the delays of the pending tasks
	 */
	public synchronized List<Duration> pendingDelays() {
		List<Task<?>> sorted = new ArrayList<>(this.tasks);
		sorted.sort(null);
		long now = this.time.nanoTime();
		return sorted.stream().map((task) -> Duration.ofNanos(task.due - now)).toList();
	}

	/**
	 * Waits until exactly {@code count} tasks are pending, as when requests arriving on other threads have
	 * been held, or when the requests that were held have gone away.
	 * @param count how many pending tasks to wait for
	 * @param timeout the longest wait
	 * @return whether that many tasks are pending
	 * @throws InterruptedException if interrupted while waiting
	 */
	public synchronized boolean awaitPending(int count, Duration timeout) throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (this.tasks.size() != count) {
			long left = deadline - System.nanoTime();
			if (left <= 0) {
				return false;
			}
			TimeUnit.NANOSECONDS.timedWait(this, left);
		}
		return true;
	}

	/**
	 * Moves the clock forward and runs, in order, every task that is then due.
	 * @param duration how far to move the clock
	 * @return how many tasks ran
	 */
	public int advance(Duration duration) {
		this.time.advance(duration);
		return runDue();
	}

	/**
	 * Moves the clock to the instant of the soonest pending task and runs every task due then.
	 * @return how many tasks ran, 0 if none was pending
	 */
	public int runNext() {
		synchronized (this) {
			Task<?> next = this.tasks.peek();
			if (next == null) {
				return 0;
			}
			if (next.due > this.time.nanoTime()) {
				this.time.set(next.due);
			}
		}
		return runDue();
	}

	/**
	 * Runs every pending task now, soonest first, without moving the clock: for tests that check when a task
	 * is due but do not need the time to pass.
	 * @return how many tasks ran
	 */
	public int runPendingNow() {
		int ran = 0;
		while (true) {
			Task<?> task;
			synchronized (this) {
				task = this.tasks.poll();
				if (task == null) {
					return ran;
				}
				notifyAll();
			}
			task.run();
			ran++;
		}
	}

	private int runDue() {
		int ran = 0;
		while (true) {
			Task<?> task;
			synchronized (this) {
				task = this.tasks.peek();
				if (task == null || task.due > this.time.nanoTime()) {
					return ran;
				}
				this.tasks.poll();
				notifyAll();
			}
			task.run();
			ran++;
		}
	}

	private synchronized void remove(Task<?> task) {
		if (this.tasks.remove(task)) {
			notifyAll();
		}
	}

	@Override
	public synchronized void shutdown() {
		this.shutdown = true;
	}

	@Override
	public synchronized List<Runnable> shutdownNow() {
		this.shutdown = true;
		List<Runnable> never = new ArrayList<>(this.tasks);
		this.tasks.clear();
		notifyAll();
		return never;
	}

	@Override
	public synchronized boolean isShutdown() {
		return this.shutdown;
	}

	@Override
	public synchronized boolean isTerminated() {
		return this.shutdown && this.tasks.isEmpty();
	}

	@Override
	public boolean awaitTermination(long timeout, TimeUnit unit) {
		return isTerminated();
	}

	private final class Task<V> extends FutureTask<V> implements ScheduledFuture<V> {

		private final long due;

		private final long order;

		Task(Callable<V> callable, long due, long order) {
			super(callable);
			this.due = due;
			this.order = order;
		}

		@Override
		public long getDelay(TimeUnit unit) {
			return unit.convert(this.due - ManualScheduler.this.time.nanoTime(), TimeUnit.NANOSECONDS);
		}

		@Override
		public int compareTo(Delayed other) {
			Task<?> task = (Task<?>) other;
			int byDue = Long.compare(this.due, task.due);
			return (byDue != 0) ? byDue : Long.compare(this.order, task.order);
		}

		@Override
		public boolean cancel(boolean mayInterruptIfRunning) {
			boolean cancelled = super.cancel(mayInterruptIfRunning);
			remove(this);
			return cancelled;
		}

	}

}
