package dev.ratelimit.core.memory;

import java.time.Duration;
import java.util.List;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.ManualTimeSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import org.jetbrains.kotlinx.lincheck.paramgen.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Options;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Checks with Lincheck that every algorithm's in-memory limiter, and a stacked decision over two of them, is
 * linearizable with respect to the reference algorithms: whatever the interleaving of requests on one hot key
 * and of clock moves, the decisions are those of the reference run in some order consistent with real time.
 * The clock moves are operations too, so a decision that read the time before a concurrent one committed a
 * later time would be caught. The scenarios are small on purpose: a limit of 2 per second, clock steps of a
 * quarter second, so that allowed and denied requests and window changes all occur.
 */
// Lincheck's @Param still names its generators by class, IntGen among them, which it marks deprecated
@SuppressWarnings("deprecation")
class InMemoryLinearizabilityTests {

	private static final long LIMIT = 2;

	private static final long WINDOW_MILLIS = 1000;

	private static final long STEP_MILLIS = 250;

	private static final String KEY = "hot";

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void everyInterleavingDecidesAsTheReference(Algorithm algorithm) {
		bounded(new ModelCheckingOptions()).sequentialSpecification(spec(algorithm)).check(model(algorithm));
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void concurrentRunsDecideAsTheReference(Algorithm algorithm) {
		bounded(new StressOptions()).sequentialSpecification(spec(algorithm)).check(model(algorithm));
	}

	@Test
	void stackedDecisionsAreAllOrNothingInEveryInterleaving() {
		// a stacked decision is a longer operation to explore: fewer scenarios keep the check as short
		bounded(new ModelCheckingOptions()).iterations(3).sequentialSpecification(StackedSpec.class).check(Stacked.class);
	}

	@Test
	void concurrentStackedDecisionsAreAllOrNothing() {
		bounded(new StressOptions()).sequentialSpecification(StackedSpec.class).check(Stacked.class);
	}

	@Test
	void stacksOnSeveralKeysAreAllOrNothingInEveryInterleaving() {
		bounded(new ModelCheckingOptions()).iterations(3)
			.sequentialSpecification(AcrossKeysSpec.class)
			.check(AcrossKeys.class);
	}

	@Test
	void concurrentStacksOnSeveralKeysAreAllOrNothing() {
		bounded(new StressOptions()).sequentialSpecification(AcrossKeysSpec.class).check(AcrossKeys.class);
	}

	/** Few enough scenarios that each check takes a few seconds. */
	private static <O extends Options<O, ?>> O bounded(O options) {
		return options.iterations(10)
			.invocationsPerIteration(100)
			.threads(2)
			.actorsPerThread(3)
			.actorsBefore(2)
			.actorsAfter(1);
	}

	private static Class<? extends Model> model(Algorithm algorithm) {
		return switch (algorithm) {
			case FIXED_WINDOW -> FixedWindow.class;
			case SLIDING_LOG -> SlidingLog.class;
			case SLIDING_WINDOW_COUNTER -> SlidingWindowCounter.class;
			case TOKEN_BUCKET -> TokenBucket.class;
			case LEAKY_BUCKET -> LeakyBucket.class;
			case GCRA -> Gcra.class;
		};
	}

	private static Class<? extends Spec> spec(Algorithm algorithm) {
		return switch (algorithm) {
			case FIXED_WINDOW -> FixedWindowSpec.class;
			case SLIDING_LOG -> SlidingLogSpec.class;
			case SLIDING_WINDOW_COUNTER -> SlidingWindowCounterSpec.class;
			case TOKEN_BUCKET -> TokenBucketSpec.class;
			case LEAKY_BUCKET -> LeakyBucketSpec.class;
			case GCRA -> GcraSpec.class;
		};
	}

	private static RateLimitPolicy policy(String name, Algorithm algorithm, long limit) {
		return RateLimitPolicy.of(name, algorithm, limit, Duration.ofMillis(WINDOW_MILLIS));
	}

	/** One limiter of the in-memory store on a manual clock. */
	public abstract static class Model {

		private final ManualTimeSource clock = new ManualTimeSource();

		private final RateLimiter limiter;

		Model(Algorithm algorithm) {
			this.limiter = InMemoryRateLimitStore.builder().timeSource(this.clock).build()
				.limiter(policy("p", algorithm, LIMIT));
		}

		@Operation
		public boolean tryAcquire() {
			return this.limiter.tryAcquire(KEY);
		}

		@Operation
		public boolean decide() {
			return this.limiter.decide(KEY).allowed();
		}

		@Operation
		public void advance(@Param(gen = IntGen.class, conf = "1:3") int steps) {
			this.clock.advance(Duration.ofMillis(STEP_MILLIS * steps));
		}

	}

	/** The reference algorithm, one operation at a time. */
	public abstract static class Spec {

		private final ReferenceLimiter reference;

		private long now;

		Spec(Algorithm algorithm) {
			this.reference = ReferenceLimiter.of(algorithm, LIMIT, WINDOW_MILLIS);
		}

		public boolean tryAcquire() {
			return this.reference.allow(this.now, true);
		}

		public boolean decide() {
			return this.reference.allow(this.now, true);
		}

		public void advance(int steps) {
			this.now += STEP_MILLIS * steps;
		}

	}

	public static final class FixedWindow extends Model {

		public FixedWindow() {
			super(Algorithm.FIXED_WINDOW);
		}

	}

	public static final class FixedWindowSpec extends Spec {

		public FixedWindowSpec() {
			super(Algorithm.FIXED_WINDOW);
		}

	}

	public static final class SlidingLog extends Model {

		public SlidingLog() {
			super(Algorithm.SLIDING_LOG);
		}

	}

	public static final class SlidingLogSpec extends Spec {

		public SlidingLogSpec() {
			super(Algorithm.SLIDING_LOG);
		}

	}

	public static final class SlidingWindowCounter extends Model {

		public SlidingWindowCounter() {
			super(Algorithm.SLIDING_WINDOW_COUNTER);
		}

	}

	public static final class SlidingWindowCounterSpec extends Spec {

		public SlidingWindowCounterSpec() {
			super(Algorithm.SLIDING_WINDOW_COUNTER);
		}

	}

	public static final class TokenBucket extends Model {

		public TokenBucket() {
			super(Algorithm.TOKEN_BUCKET);
		}

	}

	public static final class TokenBucketSpec extends Spec {

		public TokenBucketSpec() {
			super(Algorithm.TOKEN_BUCKET);
		}

	}

	public static final class LeakyBucket extends Model {

		public LeakyBucket() {
			super(Algorithm.LEAKY_BUCKET);
		}

	}

	public static final class LeakyBucketSpec extends Spec {

		public LeakyBucketSpec() {
			super(Algorithm.LEAKY_BUCKET);
		}

	}

	public static final class Gcra extends Model {

		public Gcra() {
			super(Algorithm.GCRA);
		}

	}

	public static final class GcraSpec extends Spec {

		public GcraSpec() {
			super(Algorithm.GCRA);
		}

	}

	/**
	 * A GCRA policy of 2 and a fixed window of 3 per second stacked on one key, beside requests that each
	 * policy takes on its own, so that the stack meets one policy denying while the other allows.
	 */
	public static final class Stacked {

		private final ManualTimeSource clock = new ManualTimeSource();

		private final InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).build();

		private final List<RateLimitPolicy> policies = List.of(policy("gcra", Algorithm.GCRA, LIMIT),
				policy("fixed", Algorithm.FIXED_WINDOW, LIMIT + 1));

		private final RateLimiter gcra = this.store.limiter(this.policies.get(0));

		private final RateLimiter fixed = this.store.limiter(this.policies.get(1));

		@Operation
		public List<Boolean> stacked() {
			return this.store.decideAll(KEY, this.policies).stream().map(Decision::allowed).toList();
		}

		@Operation
		public boolean gcraAlone() {
			return this.gcra.tryAcquire(KEY);
		}

		@Operation
		public boolean fixedAlone() {
			return this.fixed.tryAcquire(KEY);
		}

		@Operation
		public void advance(@Param(gen = IntGen.class, conf = "1:3") int steps) {
			this.clock.advance(Duration.ofMillis(STEP_MILLIS * steps));
		}

	}

	/**
	 * Two clients, each with a sliding log of 2 per second of its own, under a GCRA of 3 per second that they
	 * share, beside requests that only the shared limit decides and requests that take from both clients at
	 * once. The three stacks name their keys in an order that runs in a cycle (a, all; all, b; b, a), so that
	 * only the store's own order of holding keeps them from waiting for each other.
	 */
	public static final class AcrossKeys {

		private final ManualTimeSource clock = new ManualTimeSource();

		private final InMemoryRateLimitStore store = InMemoryRateLimitStore.builder().timeSource(this.clock).build();

		private final RateLimitPolicy mine = policy("mine", Algorithm.SLIDING_LOG, LIMIT);

		private final RateLimitPolicy shared = policy("shared", Algorithm.GCRA, LIMIT + 1);

		private final List<KeyedPolicy> a = List.of(new KeyedPolicy("a", this.mine), new KeyedPolicy("all", this.shared));

		private final List<KeyedPolicy> b = List.of(new KeyedPolicy("all", this.shared), new KeyedPolicy("b", this.mine));

		private final List<KeyedPolicy> both = List.of(new KeyedPolicy("b", this.mine), new KeyedPolicy("a", this.mine));

		@Operation
		public List<Boolean> clientA() {
			return this.store.decideAll(this.a).stream().map(Decision::allowed).toList();
		}

		@Operation
		public List<Boolean> clientB() {
			return this.store.decideAll(this.b).stream().map(Decision::allowed).toList();
		}

		@Operation
		public List<Boolean> bothClients() {
			return this.store.decideAll(this.both).stream().map(Decision::allowed).toList();
		}

		@Operation
		public boolean sharedAlone() {
			return this.store.limiter(this.shared).tryAcquire("all");
		}

		@Operation
		public void advance(@Param(gen = IntGen.class, conf = "1:3") int steps) {
			this.clock.advance(Duration.ofMillis(STEP_MILLIS * steps));
		}

	}

	public static final class AcrossKeysSpec {

		private final ReferenceLimiter a = ReferenceLimiter.of(Algorithm.SLIDING_LOG, LIMIT, WINDOW_MILLIS);

		private final ReferenceLimiter b = ReferenceLimiter.of(Algorithm.SLIDING_LOG, LIMIT, WINDOW_MILLIS);

		private final ReferenceLimiter shared = ReferenceLimiter.of(Algorithm.GCRA, LIMIT + 1, WINDOW_MILLIS);

		private long now;

		public List<Boolean> clientA() {
			return both(this.a);
		}

		public List<Boolean> clientB() {
			return both(this.b);
		}

		public List<Boolean> bothClients() {
			boolean allowed = this.b.allow(this.now, false) && this.a.allow(this.now, false);
			if (allowed) {
				this.b.allow(this.now, true);
				this.a.allow(this.now, true);
			}
			return List.of(allowed, allowed);
		}

		private List<Boolean> both(ReferenceLimiter mine) {
			boolean allowed = mine.allow(this.now, false) && this.shared.allow(this.now, false);
			if (allowed) {
				mine.allow(this.now, true);
				this.shared.allow(this.now, true);
			}
			return List.of(allowed, allowed);
		}

		public boolean sharedAlone() {
			return this.shared.allow(this.now, true);
		}

		public void advance(int steps) {
			this.now += STEP_MILLIS * steps;
		}

	}

	public static final class StackedSpec {

		private final ReferenceLimiter gcra = ReferenceLimiter.of(Algorithm.GCRA, LIMIT, WINDOW_MILLIS);

		private final ReferenceLimiter fixed = ReferenceLimiter.of(Algorithm.FIXED_WINDOW, LIMIT + 1, WINDOW_MILLIS);

		private long now;

		public List<Boolean> stacked() {
			boolean allowed = this.gcra.allow(this.now, false) && this.fixed.allow(this.now, false);
			if (allowed) {
				this.gcra.allow(this.now, true);
				this.fixed.allow(this.now, true);
			}
			return List.of(allowed, allowed);
		}

		public boolean gcraAlone() {
			return this.gcra.allow(this.now, true);
		}

		public boolean fixedAlone() {
			return this.fixed.allow(this.now, true);
		}

		public void advance(int steps) {
			this.now += STEP_MILLIS * steps;
		}

	}

}
