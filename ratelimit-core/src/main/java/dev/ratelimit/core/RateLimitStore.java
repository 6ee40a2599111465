package dev.ratelimit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

/**
 * Keeps the state of every key under every policy and decides requests against it: in memory for one
 * instance, in Redis for a fleet.
 * <p>
 * Beyond deciding, a store may offer capabilities, each an optional view in the way a cache's policy offers its
 * eviction: a {@link #fleet() fleet} of instances sharing its quotas, {@link #sharedChanges() runtime changes}
 * shared with that fleet, a {@link #failures() failure policy} for a server that does not answer, a
 * {@link #warmUp() warm-up} before the first request, and a {@link #resetAll() reset of every key}, such as
 * before each test of an application. A store that lacks one returns an empty view, and whoever
 * operates the store (health, metrics, runtime changes) asks the view, never the store's class.
 */
public interface RateLimitStore {

	/**
	 * How many policies in a row a key can carry its permits over from, when a policy {@link #change changes}
	 * again before the keys of its earlier values are full: the newest ones.
	 */
	int MAX_CARRIED_CHANGES = 8;

	/**
	 * Returns a limiter enforcing {@code policy} on the keys of this store.
	 * @param policy the policy
	 * @return the limiter
	 */
	RateLimiter limiter(RateLimitPolicy policy);

	/**
	 * Decides one request against several limits at once, as when an endpoint carries stacked limits: the
	 * request is allowed only if every limit allows it, and a request that any limit denies takes nothing from
	 * the others. The limits may differ in their keys.
	 * @param limits the limits, at least one, no two with the same key and policy name
	 * @return one decision per limit, in the order given; all allowed, or all denied
	 */
	List<Decision> decideAll(List<KeyedPolicy> limits);

	/**
	 * Decides one request against several limits as {@link #decideAll(List)} does, for a caller whose thread
	 * must not wait, such as a reactive server's event loop: a store that has to wait for a remote state
	 * returns at once and completes the stage when the state has answered, or when it gave up waiting and
	 * decided otherwise. Continuations must not block the thread that completes the stage, which may belong
	 * to the store's client. By default the store decides at once, on the calling thread, as stores that never
	 * wait do.
	 * @param limits the limits, at least one, no two with the same key and policy name
	 * @return a stage completing with one decision per limit, in the order given, all allowed or all denied;
	 * failed with what {@code decideAll} would throw, such as an {@link IllegalArgumentException} for limits
	 * it rejects
	 */
	default CompletionStage<List<Decision>> decideAllAsync(List<KeyedPolicy> limits) {
		try {
			return CompletableFuture.completedFuture(decideAll(limits));
		}
		catch (RuntimeException | Error ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Gives back the permits that an allowed request took as {@link #giveBack(List, List)} does, for a caller
	 * whose thread must not wait (see {@link #decideAllAsync(List)}). By default the store gives back at once,
	 * on the calling thread.
	 * @param limits the limits the request was decided against
	 * @param decisions the decisions the store returned for them, in the same order
	 * @return a stage completing once the permits are given back, or the store has given up on giving them
	 * back; failed with what {@code giveBack} would throw
	 */
	default CompletionStage<Void> giveBackAsync(List<KeyedPolicy> limits, List<Decision> decisions) {
		try {
			giveBack(limits, decisions);
			return CompletableFuture.completedFuture(null);
		}
		catch (RuntimeException | Error ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Decides one request of {@code key} against several policies at once, as {@link #decideAll(List)} does
	 * with every policy on that key.
	 * @param key who is limited
	 * @param policies the policies, at least one, with distinct names
	 * @return one decision per policy, in the order given; all allowed, or all denied
	 */
	default List<Decision> decideAll(String key, List<RateLimitPolicy> policies) {
		List<KeyedPolicy> limits = new ArrayList<>(policies.size());
		for (RateLimitPolicy policy : policies) {
			limits.add(new KeyedPolicy(key, policy));
		}
		return decideAll(limits);
	}

	/**
	 * Gives back the permits that an allowed request took, as if it had taken less or nothing: for a request
	 * whose outcome should not count. Afterwards each key is never more lenient than if the request had never
	 * been taken, and may be stricter: a bucket's instant moves back by the cost but never before now, a window
	 * gives the permits back only while the window they were taken in still counts, and a sliding log drops
	 * the request's own entries. Denied decisions, and decisions made without the store's state (a failure
	 * policy's), give back nothing. The limits are given back at once, as they were taken.
	 * @param limits the limits the request was decided against
	 * @param decisions the decisions the store returned for them, in the same order
	 */
	void giveBack(List<KeyedPolicy> limits, List<Decision> decisions);

	/**
	 * Returns what a request of one permit from {@code key} would be answered right now, without taking anything:
	 * whether it would pass, the permits left, how long until one would pass and until the key is full again.
	 * @param key who is limited
	 * @param policy the policy
	 * @return the state of the key as a decision that took nothing
	 */
	Decision inspect(String key, RateLimitPolicy policy);

	/**
	 * Returns what {@link #inspect} returns, for a caller whose thread must not wait (see
	 * {@link #decideAllAsync(List)}). By default the store inspects at once, on the calling thread.
	 * @param key who is limited
	 * @param policy the policy
	 * @return a stage completing with the state of the key; failed with what {@code inspect} would throw
	 */
	default CompletionStage<Decision> inspectAsync(String key, RateLimitPolicy policy) {
		try {
			return CompletableFuture.completedFuture(inspect(key, policy));
		}
		catch (RuntimeException | Error ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Resets {@code key} to its full quota under the policy named as {@code policy} is, whatever the cost of its
	 * requests, as if it had never been seen.
	 * @param key who is limited
	 * @param policy the policy
	 * @throws IllegalStateException if the store could not reset the key, which then keeps its state
	 */
	void reset(String key, RateLimitPolicy policy);

	/**
	 * Starts deciding under {@code to} the keys that {@code from} has decided so far, for a policy whose limit,
	 * window or burst change while the application runs. No key gets a fresh quota from the change: a key takes
	 * the permits it has in use under {@code from} along (its capacity less what it has left), as if it had
	 * taken them under {@code to} at its first request after the change, up to the capacity of {@code to}; a key
	 * that {@code from} has never seen, or that is full again, starts full. A key carries its permits over at
	 * most once, until {@link RateLimitPolicy#fullAfter() every key of} {@code from} would be full again; a key
	 * still held by an earlier change within that time is carried over from it, for the last
	 * {@link #MAX_CARRIED_CHANGES} changes. Requests decided under
	 * {@code to} afterwards, at any cost, share the carried state.
	 * @param from the policy in force so far, at any cost
	 * @param to the policy from now on, of the same name and algorithm
	 * @throws IllegalArgumentException if the policies differ in their name or algorithm
	 */
	void change(RateLimitPolicy from, RateLimitPolicy to);

	/**
	 * Checks that {@code to} may replace {@code from} in {@link #change}: the same name and algorithm.
	 * @param from the policy in force so far
	 * @param to the policy from now on
	 * @return whether the change changes anything but the cost, which a store's states do not depend on
	 * @throws IllegalArgumentException naming what differs
	 */
	static boolean checkChange(RateLimitPolicy from, RateLimitPolicy to) {
		if (!from.name().equals(to.name()) || from.algorithm() != to.algorithm()) {
			throw new IllegalArgumentException("A policy can change its limit, window and burst only, not '"
					+ from.name() + "' (" + from.algorithm() + ") into '" + to.name() + "' (" + to.algorithm() + ")");
		}
		return !from.withCost(1).equals(to.withCost(1));
	}

	/**
	 * Checks that {@code limits} can be decided together: at least one, and no key with two policies of one
	 * name, since a store tells a key's states apart by the policy's name.
	 * @param limits the limits of one request
	 * @throws IllegalArgumentException naming the repeated limit
	 */
	static void checkStack(List<KeyedPolicy> limits) {
		if (limits.isEmpty()) {
			throw new IllegalArgumentException("At least one policy is needed to decide a request");
		}
		if (limits.size() == 1) {
			return;
		}
		HashSet<Map.Entry<String, String>> seen = new HashSet<>();
		for (KeyedPolicy limit : limits) {
			if (!seen.add(Map.entry(limit.key(), limit.policy().name()))) {
				throw new IllegalArgumentException("Stacked policies must have distinct names, '"
						+ limit.policy().name() + "' appears twice on key '" + limit.key() + "'");
			}
		}
	}

	/**
	 * Checks that {@code decisions} can be given back for {@code limits}: limits that {@link #checkStack} accepts,
	 * and one decision each.
	 * @param limits the limits of one request
	 * @param decisions the decisions the store returned for them
	 * @throws IllegalArgumentException naming what does not match
	 */
	static void checkGiveBack(List<KeyedPolicy> limits, List<Decision> decisions) {
		checkStack(limits);
		if (decisions.size() != limits.size()) {
			throw new IllegalArgumentException("Expected one decision per limit, " + limits.size() + ", got "
					+ decisions.size());
		}
	}

	/**
	 * Returns the fleet of instances that share this store's quotas, when the store is shared.
	 * @return the fleet, empty for a store that one instance keeps to itself
	 */
	default Optional<Fleet> fleet() {
		return Optional.empty();
	}

	/**
	 * Returns how this store shares the runtime changes of policies with the other instances of its fleet.
	 * @return the shared changes, empty for a store that does not share them: a change then lasts as long as the
	 * instance that made it
	 */
	default Optional<SharedChanges> sharedChanges() {
		return Optional.empty();
	}

	/**
	 * Returns how this store decides when the server that keeps its state does not answer, and how it fared.
	 * @return the failures, empty for a store that never waits for a server
	 */
	default Optional<Failures> failures() {
		return Optional.empty();
	}

	/**
	 * Returns how this store prepares for the first requests.
	 * @return the warm-up, empty for a store that needs none
	 */
	default Optional<WarmUp> warmUp() {
		return Optional.empty();
	}

	/**
	 * Returns the store's limits on requests in flight, where it keeps them.
	 * @return the limits in flight, or empty for a store without them
	 */
	default Optional<InFlight> inFlight() {
		return Optional.empty();
	}

	/**
	 * Returns how this store resets every key it holds at once.
	 * @return the reset of every key, empty for a store that can reset keys only one by one
	 */
	default Optional<ResetAll> resetAll() {
		return Optional.empty();
	}

	/**
	 * The instances that share a store's quotas.
	 */
	@FunctionalInterface
	interface Fleet {

		/**
		 * Returns how many instances share the store's quotas, as last counted; a store whose server has never
		 * answered counts itself alone. Under {@link FailurePolicy#LOCAL} each enforces its share of every limit
		 * while the server is away.
		 * @return the size of the fleet, at least 1
		 */
		int size();

	}

	/**
	 * The runtime changes of policies that every instance of a fleet applies, kept where an instance that starts
	 * later reads them.
	 */
	interface SharedChanges {

		/**
		 * Shares a runtime change of a policy with every instance of the fleet, or removes it. Each instance
		 * learns of it soon after and tells its {@link #onChange listener}, which applies it.
		 * @param policy the name of the policy
		 * @param change its new values, or null to remove its change
		 * @throws IllegalStateException if the store could not share it
		 */
		void share(String policy, @Nullable SharedChange change);

		/**
		 * Reads the changes that the fleet shares for the given policies.
		 * @param policies the names of the policies
		 * @return the change of each policy that has one
		 * @throws IllegalStateException if the store could not read them
		 */
		Map<String, SharedChange> read(Collection<String> policies);

		/**
		 * Sets what runs whenever the fleet's shared changes may have changed, and once the store first knows
		 * them: typically {@link #read reading} them and applying them with {@link RateLimitStore#change}.
		 * @param listener what runs, on a thread of the store's; must not throw
		 */
		void onChange(Runnable listener);

	}

	/**
	 * The values a runtime change gives a policy, which every instance of a fleet applies.
	 *
	 * @param limit the limit
	 * @param window the window
	 * @param burst the burst, the limit for the window algorithms
	 */
	record SharedChange(long limit, Duration window, long burst) {

		/**
		 * Creates the values of a change.
		 * @param limit the limit
		 * @param window the window, a whole number of microseconds
		 * @param burst the burst
		 */
		public SharedChange {
			Objects.requireNonNull(window, "window must not be null");
		}

		/**
		 * Returns the values of {@code policy}.
		 * @param policy the policy
		 * @return its limit, window and burst
		 */
		public static SharedChange of(RateLimitPolicy policy) {
			return new SharedChange(policy.limit(), policy.window(), policy.burst());
		}

	}

	/**
	 * What a store whose state lives in a server decides when the server does not, and how often it did.
	 */
	interface Failures {

		/**
		 * Returns the failure policy, since how long the server has been failing, if it is, and how many
		 * decisions the failure policy has made.
		 * @return the status of the failure policy
		 */
		FailureStatus status();

		/**
		 * Adds a listener told of every decision the failure policy makes and of every give-back the server did
		 * not carry out.
		 * @param listener the listener
		 */
		void addListener(FailureListener listener);

	}

	/**
	 * Told of every decision that a store's {@link FailurePolicy} made because its server did not.
	 */
	@FunctionalInterface
	interface FailureListener {

		/**
		 * Called once per decision made without the server, on the thread that asked for it, or for an
		 * {@link RateLimitStore#decideAllAsync asynchronous} decision on the thread that completes it; must be
		 * quick, must not block and must not throw.
		 * @param policies the policies of the decision
		 * @param cause why the server did not decide, such as a {@link java.util.concurrent.TimeoutException},
		 * or the last such failure while the server is known to be failing
		 */
		void onFailure(List<RateLimitPolicy> policies, Throwable cause);

		/**
		 * Called once per {@link RateLimitStore#giveBack give-back} that the server did not carry out, whose
		 * permits stay taken, on the thread that gave back, or for an
		 * {@link RateLimitStore#giveBackAsync asynchronous} give-back on the thread that completes it; must be
		 * quick, must not block and must not throw. Does nothing by default.
		 * @param policies the policies whose permits stay taken
		 * @param cause why the server did not take them back
		 */
		default void onGiveBackFailure(List<RateLimitPolicy> policies, Throwable cause) {
		}

	}

	/**
	 * Prepares a store for the first requests, such as opening its connection and loading what its server runs,
	 * which the first request would otherwise pay for.
	 */
	@FunctionalInterface
	interface WarmUp {

		/**
		 * Prepares what deciding the given stacks of policies needs, without changing any client's state.
		 * @param stacks the policies of each endpoint, decided together when there are several
		 * @return completes once the store is ready, exceptionally when it could not prepare
		 */
		CompletionStage<Void> warmUp(Collection<List<RateLimitPolicy>> stacks);

	}

	/**
	 * Resets every key of a store at once, as when each test of an application is to start with every limit
	 * full.
	 */
	@FunctionalInterface
	interface ResetAll {

		/**
		 * Resets every key under every policy to its full quota, as {@link RateLimitStore#reset} does for one, and
		 * under the policies they changed from: a request decided afterwards is decided as the first of a key the
		 * store has never seen. Decisions under way meanwhile may be decided either way.
		 * @throws IllegalStateException if the store could not reset every key, some of which then keep their
		 * state
		 */
		void resetAll();

	}

	/**
	 * Limits on requests in flight: at most {@code limit} of one key's requests at once under one name, each
	 * holding a permit from its start to its end. Nothing refills with time: a permit returns when its request
	 * releases it, or, in a store that a fleet shares, when the lease of an instance that died holding it
	 * expires. A store that cannot decide follows its failure policy.
	 */
	interface InFlight {

		/**
		 * Takes one of the {@code limit} permits of {@code key} under {@code name}, without waiting for one to
		 * return; the stage completes without blocking the calling thread.
		 * @param name names the limit: the requests of one name and key share its permits
		 * @param key who is limited
		 * @param limit how many of the key's requests may be in flight at once, at least 1
		 * @return a stage completing with the permit, granted or not
		 * @throws IllegalArgumentException if {@code limit} is below 1
		 */
		CompletionStage<Permit> acquire(String name, String key, long limit);

		/**
		 * Checks the arguments of {@link #acquire}, as every store does.
		 * @param name names the limit
		 * @param limit how many of a key's requests may be in flight at once
		 * @throws IllegalArgumentException if {@code limit} is below 1
		 */
		static void checkLimit(String name, long limit) {
			Objects.requireNonNull(name, "name must not be null");
			if (limit < 1) {
				throw new IllegalArgumentException("in-flight limit '" + name + "' must be at least 1, was " + limit);
			}
		}

		/**
		 * A permit of a request in flight, or the refusal of one.
		 */
		interface Permit {

			/**
			 * Returns whether the permit was granted; a refused one holds nothing.
			 * @return whether it was granted
			 */
			boolean granted();

			/**
			 * Returns how many of the key's permits were held once this one was decided, itself included if
			 * granted.
			 * @return the permits held
			 */
			long held();

			/**
			 * Gives the permit back, once, without blocking the calling thread; nothing for a refused one or
			 * one given back already.
			 */
			void release();

			/**
			 * Returns a granted permit that gives itself back with {@code release}, once however often it is
			 * released.
			 * @param held how many were held once it was granted, itself included
			 * @param release gives it back in the store, without blocking
			 * @return the permit
			 */
			static Permit granted(long held, Runnable release) {
				AtomicBoolean released = new AtomicBoolean();
				return new Permit() {

					@Override
					public boolean granted() {
						return true;
					}

					@Override
					public long held() {
						return held;
					}

					@Override
					public void release() {
						if (released.compareAndSet(false, true)) {
							release.run();
						}
					}

				};
			}

			/**
			 * Returns a refused permit, as a store answers when all the permits of a key are held.
			 * @param held how many were held when it was refused
			 * @return the refusal
			 */
			static Permit refused(long held) {
				return new Permit() {

					@Override
					public boolean granted() {
						return false;
					}

					@Override
					public long held() {
						return held;
					}

					@Override
					public void release() {
					}

				};
			}

		}

	}

}
