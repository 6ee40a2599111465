package dev.ratelimit.benchmarks;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Predicate;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.memory.InMemoryRateLimitStore;
import io.github.bucket4j.Bucket;

/**
 * One limiter in the race, asked the same question by every benchmark: may this key pass now? Ours is our keyed
 * in-memory store; a keyed peer holds one of its limiters per key in a {@link ConcurrentHashMap}, created on
 * first use, the usual way to key them; a bare peer is a single limiter that ignores the key, the best a peer can
 * do when there is only one key.
 * <p>
 * Each JMH fork runs one contender only, so the call through this interface stays monomorphic and is inlined.
 */
@FunctionalInterface
public interface Contender {

	/** Our algorithms, by {@link Algorithm} name. */
	String[] OURS = { "GCRA", "TOKEN_BUCKET", "FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_LOG",
			"LEAKY_BUCKET" };

	/** The keyed peers. */
	String[] PEERS = { "bucket4j", "resilience4j", "guava" };

	/**
	 * Not a limiter: per call a lookup in a {@link ConcurrentHashMap}, a read of {@link System#nanoTime()} and
	 * one atomic write of the key's word, the least work an exact keyed limiter can do. The ratio of a limiter
	 * to it tells how much of the limiter's time goes beyond that floor.
	 */
	String MAP_FLOOR = "map-floor";

	/** The bare peers, for a single key. */
	String[] BARE_PEERS = { "bucket4j-bare", "resilience4j-bare", "guava-bare" };

	/**
	 * Decides one request of {@code key}.
	 * @param key the key
	 * @return whether it is allowed
	 */
	boolean tryAcquire(String key);

	/**
	 * Creates the contender of the given name under the given load.
	 * @param name one of {@link #OURS}, {@link #PEERS} or {@link #BARE_PEERS}
	 * @param load the load
	 * @param maxKeys how many keys our store must track without falling back to its shared overflow quota
	 * @return the contender
	 */
	static Contender create(String name, Load load, int maxKeys) {
		return create(name, load.peerPolicy(), maxKeys);
	}

	/**
	 * Creates the contender of the given name with {@code policy}'s limit, window and burst; ours runs the
	 * algorithm it is named after.
	 * @param name one of {@link #OURS}, {@link #PEERS} or {@link #BARE_PEERS}
	 * @param policy the policy, whose burst is its limit
	 * @param maxKeys how many keys our store must track without falling back to its shared overflow quota
	 * @return the contender
	 */
	static Contender create(String name, RateLimitPolicy policy, int maxKeys) {
		return switch (name) {
			case "bucket4j" -> keyed((key) -> Peers.bucket4j(policy), (bucket) -> bucket.tryConsume(1));
			case "resilience4j" -> keyed((key) -> Peers.resilience4j(policy),
					io.github.resilience4j.ratelimiter.RateLimiter::acquirePermission);
			case "guava" -> keyed((key) -> Peers.guava(policy),
					com.google.common.util.concurrent.RateLimiter::tryAcquire);
			case MAP_FLOOR -> keyed((key) -> new AtomicLong(), (word) -> word.getAndAdd(System.nanoTime()) != 1);
			case "bucket4j-bare" -> {
				Bucket bucket = Peers.bucket4j(policy);
				yield (key) -> bucket.tryConsume(1);
			}
			case "resilience4j-bare" -> {
				io.github.resilience4j.ratelimiter.RateLimiter limiter = Peers.resilience4j(policy);
				yield (key) -> limiter.acquirePermission();
			}
			case "guava-bare" -> {
				com.google.common.util.concurrent.RateLimiter limiter = Peers.guava(policy);
				yield (key) -> limiter.tryAcquire();
			}
			default -> {
				RateLimiter limiter = InMemoryRateLimitStore.builder()
					.maxKeys(maxKeys)
					.build()
					.limiter(new RateLimitPolicy(policy.name(), Algorithm.valueOf(name), policy.limit(),
							policy.window(), policy.burst(), 1, 0));
				yield limiter::tryAcquire;
			}
		};
	}

	private static <L> Contender keyed(Function<String, L> factory, Predicate<L> acquire) {
		ConcurrentHashMap<String, L> limiters = new ConcurrentHashMap<>();
		return (key) -> {
			L limiter = limiters.get(key);
			if (limiter == null) {
				limiter = limiters.computeIfAbsent(key, factory);
			}
			return acquire.test(limiter);
		};
	}

}
