package dev.ratelimit.core.testing;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

/**
 * How long the calling thread has been ready to run but waiting for a CPU, as Linux counts it in
 * {@code /proc/thread-self/schedstat}: the time a busy machine, not the code under test, added to a wait.
 * <p>
 * A latency bound is a promise about what the code makes a caller wait. On a machine of two cores shared by
 * dozens of threads, a thread whose reply is ready may still wait for a CPU for tens of milliseconds; a test
 * that subtracts that wait measures the code, and still catches any wait the code itself adds (a timeout not
 * enforced, a lock held, a second round trip). Where the kernel does not tell, the wait counts as zero and the
 * bound applies to the whole latency.
 */
public final class RunQueueWait {

	private static final String SCHEDSTAT = "/proc/thread-self/schedstat";

	/** Each thread's own file: {@code thread-self} names the thread that opened it. */
	private static final ThreadLocal<@Nullable RandomAccessFile> FILES = ThreadLocal.withInitial(RunQueueWait::open);

	private RunQueueWait() {
	}

	/**
	 * Returns the time the calling thread has waited for a CPU since it started.
	 * @return the run-queue wait in nanoseconds, or 0 where the kernel does not tell
	 */
	public static long nanos() {
		RandomAccessFile file = FILES.get();
		if (file == null) {
			return 0;
		}
		try {
			byte[] buffer = new byte[128];
			file.seek(0);
			int length = file.read(buffer);
			// "<on cpu> <waiting for a cpu> <time slices>", in nanoseconds
			String[] fields = new String(buffer, 0, Math.max(length, 0), StandardCharsets.US_ASCII).trim().split(" ");
			return (fields.length >= 2) ? Long.parseLong(fields[1]) : 0;
		}
		catch (IOException | NumberFormatException ex) {
			return 0;
		}
	}

	private static @Nullable RandomAccessFile open() {
		try {
			return new RandomAccessFile(SCHEDSTAT, "r");
		}
		catch (IOException ex) {
			return null;
		}
	}

}
