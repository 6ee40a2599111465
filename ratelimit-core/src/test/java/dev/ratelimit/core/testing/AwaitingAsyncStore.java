package dev.ratelimit.core.testing;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.RateLimiter;

/**
 * A store that makes every decision and give-back of another store through its asynchronous methods,
 * {@link RateLimitStore#decideAllAsync} and {@link RateLimitStore#giveBackAsync}, and waits for the stage, so
 * that a suite written against the blocking methods, such as the store contract, checks the asynchronous ones:
 * its limiters decide through {@code decideAllAsync} too. What a stage fails with is thrown as it was, unwrapped,
 * as the blocking method would throw it. Inspecting, resetting (one key or all) and changing a policy go to the
 * other store as they are.
 */
public final class AwaitingAsyncStore implements RateLimitStore {

	/** Far longer than any decision may take: the bound only makes a stage that never completes fail the test. */
	private static final long BOUND_SECONDS = 60;

	private final RateLimitStore store;

	/**
	 * Wraps a store.
	 * @param store the store whose asynchronous methods decide
	 */
	public AwaitingAsyncStore(RateLimitStore store) {
		this.store = Objects.requireNonNull(store, "store must not be null");
	}

	@Override
	public RateLimiter limiter(RateLimitPolicy policy) {
		Objects.requireNonNull(policy, "policy must not be null");
		return new RateLimiter() {

			@Override
			public RateLimitPolicy policy() {
				return policy;
			}

			@Override
			public Decision decide(String key) {
				return decideAll(List.of(new KeyedPolicy(key, policy))).get(0);
			}

			@Override
			public boolean tryAcquire(String key) {
				return decide(key).allowed();
			}

			@Override
			public Decision decide(String key, long permits) {
				return decideAll(List.of(new KeyedPolicy(key, policy.withCost(permits)))).get(0);
			}

			@Override
			public Decision acquire(String key, Duration maxWait) throws InterruptedException {
				try {
					return AwaitingAsyncStore.this.store.limiter(policy).acquireAsync(key, maxWait).join();
				}
				catch (CompletionException ex) {
					throw (ex.getCause() instanceof RuntimeException cause) ? cause : ex;
				}
			}

			@Override
			public CompletableFuture<Decision> acquireAsync(String key, Duration maxWait) {
				return AwaitingAsyncStore.this.store.limiter(policy).acquireAsync(key, maxWait);
			}

		};
	}

	@Override
	public List<Decision> decideAll(List<KeyedPolicy> limits) {
		return await(this.store.decideAllAsync(limits));
	}

	@Override
	public void giveBack(List<KeyedPolicy> limits, List<Decision> decisions) {
		await(this.store.giveBackAsync(limits, decisions));
	}

	@Override
	public Decision inspect(String key, RateLimitPolicy policy) {
		return await(this.store.inspectAsync(key, policy));
	}

	@Override
	public void reset(String key, RateLimitPolicy policy) {
		this.store.reset(key, policy);
	}

	@Override
	public void change(RateLimitPolicy from, RateLimitPolicy to) {
		this.store.change(from, to);
	}

	@Override
	public Optional<ResetAll> resetAll() {
		return this.store.resetAll();
	}

	@Override
	public Optional<InFlight> inFlight() {
		return this.store.inFlight();
	}

	private static <T> T await(CompletionStage<T> stage) {
		try {
			return stage.toCompletableFuture().get(BOUND_SECONDS, TimeUnit.SECONDS);
		}
		catch (ExecutionException ex) {
			Throwable cause = ex.getCause();
			if (cause instanceof RuntimeException runtime) {
				throw runtime;
			}
			if (cause instanceof Error error) {
				throw error;
			}
			throw new IllegalStateException(cause);
		}
		catch (TimeoutException ex) {
			throw new AssertionError("The stage did not complete within " + BOUND_SECONDS + " s", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
