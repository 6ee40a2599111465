package dev.ratelimit.benchmarks;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One caller making one call at a time while the contenders take turns: a block of calls through each of them in
 * turn, over and over, every call timed. JMH measures one contender after the other, a minute or more apart, and
 * on a shared machine the round trip itself changes from one minute to the next by more than the difference a
 * one-thread comparison looks for; taking turns every few milliseconds puts every contender on the same machine.
 * A contender's time per decision is the median of its calls, which a stall of the machine moves far less than a
 * throughput.
 */
final class InterleavedLatency {

	private static final int KEYS = 1024;

	private static final int BLOCK = 100;

	private InterleavedLatency() {
	}

	/**
	 * Times {@code turns} blocks of calls through each contender under the ALLOWED load, each contender on keys of
	 * its own, after {@code warmupTurns} untimed ones, in which the contenders' code gets compiled.
	 * @return the median microseconds per call of each contender, in the order given
	 * @throws IllegalStateException if a call was denied or one of our stores decided without Redis
	 */
	static Map<String, Double> medians(int port, String[] contenders, int warmupTurns, int turns) throws Exception {
		int n = contenders.length;
		List<RedisContender> opened = new ArrayList<>();
		try {
			for (String contender : contenders) {
				opened.add(RedisContender.open(contender, port));
			}
			String[][] keys = new String[n][KEYS];
			byte[][][] bytes = new byte[n][KEYS][];
			for (int k = 0; k < n; k++) {
				for (int i = 0; i < KEYS; i++) {
					keys[k][i] = "user:" + k + ":" + i;
					bytes[k][i] = keys[k][i].getBytes(StandardCharsets.UTF_8);
				}
			}
			long[][] nanos = new long[n][turns * BLOCK];
			long denied = 0;
			for (int turn = -warmupTurns; turn < turns; turn++) {
				for (int j = 0; j < n; j++) {
					// who goes first moves on with every turn, so that no contender always follows the same one
					int k = Math.floorMod(turn + j, n);
					RedisContender.Limiter limiter = opened.get(k).limiter;
					for (int i = 0; i < BLOCK; i++) {
						int key = Math.floorMod(turn * BLOCK + i, KEYS);
						long start = System.nanoTime();
						boolean allowed = limiter.tryAcquire(keys[k][key], bytes[k][key]);
						long took = System.nanoTime() - start;
						if (!allowed) {
							denied++;
						}
						if (turn >= 0) {
							nanos[k][turn * BLOCK + i] = took;
						}
					}
				}
			}
			for (RedisContender contender : opened) {
				contender.checkEveryDecisionCameFromRedis();
			}
			if (denied > 0) {
				throw new IllegalStateException(denied + " calls were denied under a load meant to allow them all");
			}
			Map<String, Double> medians = new LinkedHashMap<>();
			for (int k = 0; k < n; k++) {
				medians.put(contenders[k],
						InMemorySection.Results.median(Arrays.stream(nanos[k]).asDoubleStream().toArray()) / 1000.0);
			}
			return medians;
		}
		finally {
			for (RedisContender contender : opened) {
				contender.close();
			}
		}
	}

}
