package dev.ratelimit.benchmarks;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Keys and a pre-generated stream of requests over them, so that no benchmark spends its measured time making
 * keys or drawing random numbers.
 * <p>
 * The stream follows Zipf's law with exponent 1, as client and URL popularity roughly do: the key of rank
 * {@code r} is asked {@code 1 / r} times as often as the most popular one. Ranks are shuffled over the keys so
 * that popularity has nothing to do with creation order, and everything is drawn from a fixed seed.
 */
public final class Keys {

	private final String[] keys;

	private final String[] stream;

	private Keys(String[] keys, String[] stream) {
		this.keys = keys;
		this.stream = stream;
	}

	/**
	 * Creates {@code count} keys and a Zipf-distributed stream of {@code streamLength} requests over them.
	 * @param count how many distinct keys
	 * @param streamLength how many requests, a power of two
	 * @param seed the seed
	 * @return the keys and the stream
	 */
	public static Keys zipf(int count, int streamLength, long seed) {
		if (Integer.bitCount(streamLength) != 1) {
			throw new IllegalArgumentException("streamLength must be a power of two, was " + streamLength);
		}
		String[] keys = names(count);
		SplittableRandom random = new SplittableRandom(seed);
		int[] keyOfRank = new int[count];
		Arrays.setAll(keyOfRank, (i) -> i);
		for (int i = count - 1; i > 0; i--) {
			int j = random.nextInt(i + 1);
			int swap = keyOfRank[i];
			keyOfRank[i] = keyOfRank[j];
			keyOfRank[j] = swap;
		}
		double[] cumulative = new double[count];
		double sum = 0;
		for (int rank = 0; rank < count; rank++) {
			sum += 1.0 / (rank + 1);
			cumulative[rank] = sum;
		}
		String[] stream = new String[streamLength];
		for (int i = 0; i < streamLength; i++) {
			int rank = Arrays.binarySearch(cumulative, random.nextDouble() * sum);
			rank = (rank >= 0) ? rank : Math.min(-rank - 1, count - 1);
			stream[i] = keys[keyOfRank[rank]];
		}
		return new Keys(keys, stream);
	}

	/**
	 * Creates {@code count} distinct keys shaped like user ids.
	 * @param count how many
	 * @return the keys
	 */
	public static String[] names(int count) {
		String[] keys = new String[count];
		for (int i = 0; i < count; i++) {
			keys[i] = "user:" + (10_000_000 + i);
		}
		return keys;
	}

	/**
	 * Returns every key once.
	 * @return the keys
	 */
	public String[] keys() {
		return this.keys;
	}

	/**
	 * Returns the stream of requests: a key per request, in order, the same key object as in {@link #keys()}.
	 * @return the stream, whose length is a power of two
	 */
	public String[] stream() {
		return this.stream;
	}

}
