package dev.ratelimit.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.ref.Reference;
import java.time.Duration;
import java.util.Locale;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;

/**
 * Heap retained per key: one request on each of {@code n} keys, then the growth of the live heap divided by
 * {@code n}. Meant to run alone in a JVM with the serial collector, whose full collection compacts the heap, so
 * that "used after {@code System.gc()}" is the live data.
 * <p>
 * The keys are created and held before the first measurement, so the figure is what the limiter itself adds per
 * key (map entry, table slot, state), not the key string, which the caller's request owns; the string's own size
 * is reported beside it. Our store reads a frozen clock so that no key becomes idle and is forgotten while
 * measured: every key stays tracked, the most it can cost. Peers never forget a key.
 */
public final class Footprint {

	/** 100 per minute, burst 100: one request leaves every algorithm's state in use for a while. */
	static final RateLimitPolicy TOKEN_BUCKET = RateLimitPolicy.of("footprint", Algorithm.TOKEN_BUCKET, 100,
			Duration.ofMinutes(1));

	private Footprint() {
	}

	/**
	 * Prints {@code contender bytesPerKey keysTracked keyStringBytes}.
	 * @param args the contender's name and the number of keys
	 * @throws InterruptedException if interrupted between collections
	 */
	public static void main(String[] args) throws InterruptedException {
		String usage = "usage: Footprint CONTENDER KEYS, run by the suite's footprint section in a JVM of its own";
		CommandLine.helpIfAsked(args, usage);
		int count = 0;
		try {
			if (args.length != 2) {
				throw new IllegalArgumentException("two arguments expected, was " + args.length);
			}
			count = Integer.parseInt(args[1]);
		}
		catch (NumberFormatException ex) {
			CommandLine.fail(new IllegalArgumentException("KEYS must be a whole number, was '" + args[1] + "'"), usage);
		}
		catch (IllegalArgumentException ex) {
			CommandLine.fail(ex, usage);
		}
		String contender = args[0];
		long empty = liveHeap();
		String[] keys = Keys.names(count);
		long before = liveHeap();
		// the array holding the keys is the harness's, not part of a key
		long keyStrings = before - empty - (16L + 4L * count);
		Object[] holder = new Object[1];
		long tracked = fill(contender, keys, holder);
		long after = liveHeap();
		Reference.reachabilityFence(holder);
		Reference.reachabilityFence(keys);
		System.out.printf(Locale.ROOT, "%s %.1f %d %.1f%n", contender, (after - before) / (double) count, tracked,
				keyStrings / (double) count);
	}

	private static long fill(String contender, String[] keys, Object[] holder) {
		if (!contender.equals(contender.toUpperCase(Locale.ROOT))) {
			Contender limiter = Contender.create(contender, TOKEN_BUCKET, 2 * keys.length);
			holder[0] = limiter;
			for (String key : keys) {
				limiter.tryAcquire(key);
			}
			return keys.length;
		}
		InMemoryRateLimitStore store = InMemoryRateLimitStore.builder()
			.timeSource(new ManualTimeSource(1_000_000_000L))
			.maxKeys(2 * keys.length)
			.build();
		var limiter = store.limiter(RateLimitPolicy.of("footprint", Algorithm.valueOf(contender), TOKEN_BUCKET.limit(),
				TOKEN_BUCKET.window()));
		holder[0] = store;
		for (String key : keys) {
			limiter.tryAcquire(key);
		}
		return store.size();
	}

	private static long liveHeap() throws InterruptedException {
		MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
		long previous = -1;
		for (int i = 0; i < 10; i++) {
			System.gc();
			Thread.sleep(50);
			long used = memory.getHeapMemoryUsage().getUsed();
			if (used == previous) {
				return used;
			}
			previous = used;
		}
		return previous;
	}

}
