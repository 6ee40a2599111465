package dev.ratelimit.spring.web.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.KeyedPolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.spring.RateLimitRejection;
import dev.ratelimit.spring.observability.internal.DecisionObserver;
import dev.ratelimit.spring.observability.internal.RateLimitMetrics;
import dev.ratelimit.spring.observability.internal.RateLimitMetrics.Outcome;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.ProblemDetail;

/**
 * Decides one request against the limits it matched, whichever web stack serves it, and tells the stack what
 * to do with it in a {@link Verdict}: let it through with the rate limit headers, hold it until a leaky
 * bucket's slot, reject it with 429, or answer 400 for a cost its limits can never take. A request is decided
 * under the limits of its client's plan, at its own cost. With an observation registry, each decision is
 * {@link DecisionObserver observed}.
 * <p>
 * Limits that {@link CountedOutcomes count only some outcomes}, such as failed logins, take nothing before the
 * request runs: a request is refused only if its client is over the limit already, so that the requests that
 * will not count, the right password's, never wait for permits that others hold while they run. The verdict
 * carries a {@link Reservation} that the stack {@link #settle settles} with the response's status, taking the
 * permits of a status that counts. A client with {@code c} such requests in flight at once can thereby have up to
 * {@code limit + c - 1} counted in a window, never more; each request after that is refused until the window
 * passes. A store whose server does not answer tells by its failure policy, which also counts what fails
 * meanwhile. Such limits write their headers only on a rejection: what is left depends on how
 * the requests in flight end.
 * <p>
 * The policies in shadow mode of an endpoint are decided as a stack of their own, after the enforced ones and
 * only if those let the request through, exactly as if they were enforced: a request they would deny takes
 * nothing, one they would admit takes its permits, a leaky bucket's slot included, and gives them back like the
 * enforced ones. Whatever they decide, the request proceeds at once and its response is left as it is, without
 * their headers unless {@code ratelimit.shadow-headers} asks for them; the metrics and the {@link ShadowLog}
 * tell what they would have done.
 */
public final class RequestDecisions {

	/** The headers of an allowed call, which no response carries. */
	private static final HttpHeaders NO_HEADERS = HttpHeaders.readOnlyHttpHeaders(new HttpHeaders());

	private final RateLimitStore store;

	private final RateLimitMetrics metrics;

	private final boolean legacyHeaders;

	private final boolean shadowHeaders;

	private final UnresolvedKeys unresolvedKeys;

	private final CurrentLimits current;

	private final ShadowLog shadowLog;

	private final @Nullable DecisionObserver observer;

	private final @Nullable ClientLimits clientLimits;

	private final InFlightLimits inFlight;

	/**
	 * Creates the decisions of requests in {@code store}.
	 * @param store the store that decides
	 * @param metrics where each decision is recorded
	 * @param legacyHeaders whether to write the {@code X-RateLimit-*} headers too
	 * @param shadowHeaders whether an allowed request carries the headers of its policies in shadow mode
	 * @param unresolvedKeys computes keys, falling back to the client address
	 * @param shadowLog tells what the policies in shadow mode would have done
	 * @param current the limits in force, as declared or changed at runtime
	 * @param observer observes each decision, or null
	 * @param clientLimits the limits of each client from the application's records, or null
	 */
	public RequestDecisions(RateLimitStore store, RateLimitMetrics metrics, boolean legacyHeaders, boolean shadowHeaders,
			UnresolvedKeys unresolvedKeys, ShadowLog shadowLog, CurrentLimits current,
			@Nullable DecisionObserver observer, @Nullable ClientLimits clientLimits) {
		this.store = store;
		this.metrics = metrics;
		this.legacyHeaders = legacyHeaders;
		this.shadowHeaders = shadowHeaders;
		this.unresolvedKeys = unresolvedKeys;
		this.shadowLog = shadowLog;
		this.current = current;
		this.observer = observer;
		this.clientLimits = clientLimits;
		this.inFlight = new InFlightLimits(store, metrics);
	}

	/** Decides the request unless it is exempt, on the calling thread. */
	public Verdict decide(LimitedRequest request, LimitCatalog.Match match) {
		return join(decide(request, match, true));
	}

	/**
	 * Decides the request unless it is exempt, as {@link #decide} does, without waiting for the store: for a
	 * caller whose thread must not block. Keys, exemptions, plans and costs are computed on the calling thread;
	 * the rest runs where the store completes its decisions.
	 */
	public CompletionStage<Verdict> decideAsync(LimitedRequest request, LimitCatalog.Match match) {
		return decide(request, match, false);
	}

	/**
	 * Decides the request: its enforced policies, then, if they let it through, its policies in shadow mode;
	 * the store waited for if {@code wait}, so that the stage is complete when returned.
	 */
	private CompletionStage<Verdict> decide(LimitedRequest request, LimitCatalog.Match match, boolean wait) {
		Run run = begin(request, match);
		if (run.verdict != null) {
			return CompletableFuture.completedFuture(run.verdict);
		}
		if (!run.limits.limitsInFlight()) {
			return decideRates(run, wait);
		}
		CompletionStage<@Nullable Verdict> inFlight = takeInFlight(run);
		if (wait) {
			// a caller that waits goes on on its own thread, never on the one that completed the store's stage
			inFlight = CompletableFuture.completedFuture(join(inFlight));
		}
		return inFlight.thenCompose((refused) -> {
			if (refused != null) {
				return CompletableFuture.completedFuture(refused);
			}
			CompletionStage<Verdict> decided = decideRates(run, wait);
			if (run.permits.isEmpty()) {
				return decided;
			}
			// a request refused, or not decided, never runs: its permits in flight go back at once
			return decided.whenComplete((verdict, ex) -> {
				if (ex != null || !verdict.goesOn()) {
					this.inFlight.release(run.permits);
				}
			});
		});
	}

	/** Decides the request's rates: taking their permits, or, for limits that count only some outcomes, asking. */
	private CompletionStage<Verdict> decideRates(Run run, boolean wait) {
		return run.limits.counted().all() ? decideTaken(run, wait) : admitCounted(run, wait);
	}

	/**
	 * Takes the permits in flight of the request's enforced policies, before its rates are decided; returns the
	 * verdict that refuses the request when one is not granted, or null.
	 */
	private CompletionStage<@Nullable Verdict> takeInFlight(Run run) {
		return this.inFlight.take(run.limits, run.enforced, (i) -> key(run, i), (permits) -> run.permits = permits);
	}

	/**
	 * Decides the request's enforced policies, taking their permits, then, if they let it through, its policies
	 * in shadow mode; the store waited for if {@code wait}.
	 */
	private CompletionStage<Verdict> decideTaken(Run run, boolean wait) {
		CompletionStage<@Nullable Verdict> enforced = CompletableFuture.completedFuture(null);
		if (!run.enforced.isEmpty()) {
			long start = System.nanoTime();
			List<KeyedPolicy> keyed = run.keyed;
			DecisionObserver observer = this.observer;
			CompletionStage<List<Decision>> decisions = (observer != null)
					? observer.decide(this.store, run.enforced.policies(), () -> decideAll(keyed, wait))
					: decideAll(keyed, wait);
			enforced = decisions.thenApply((decided) -> enforced(run, decided, System.nanoTime() - start));
		}
		return enforced.thenCompose((rejected) -> (rejected != null) ? CompletableFuture.completedFuture(rejected)
				: shadowThenFinish(run, (shadowKeyed) -> decideAll(shadowKeyed, wait)));
	}

	/**
	 * Decides the shadow policies of a request that its enforced ones let through, as {@code decide} says, then
	 * finishes it.
	 */
	private CompletionStage<Verdict> shadowThenFinish(Run run,
			Function<List<KeyedPolicy>, CompletionStage<List<Decision>>> decide) {
		List<KeyedPolicy> shadowKeyed = shadowKeyed(run);
		if (shadowKeyed == null) {
			return CompletableFuture.completedFuture(finish(run));
		}
		long start = System.nanoTime();
		return decide.apply(shadowKeyed).thenApply((decided) -> {
			shadowed(run, shadowKeyed, decided, System.nanoTime() - start);
			return finish(run);
		});
	}

	/**
	 * Admits a request under limits that count only some outcomes, taking nothing: refused only if its client is
	 * over one of them already. Its shadow policies are asked the same way, and count at its end only if they
	 * would have let it through.
	 */
	private CompletionStage<Verdict> admitCounted(Run run, boolean wait) {
		long start = System.nanoTime();
		return peekAll(run.keyed, wait).thenCompose((peeked) -> {
			if (!run.enforced.isEmpty()) {
				Verdict rejected = enforced(run, peeked, System.nanoTime() - start);
				if (rejected != null) {
					return CompletableFuture.completedFuture(rejected);
				}
			}
			return shadowThenFinish(run, (shadowKeyed) -> peekAll(shadowKeyed, wait));
		});
	}

	/**
	 * What each limit would answer now, taking nothing, all refused if one is, as a stack is decided; waited
	 * for if {@code wait}. A limit whose store cannot tell answers that the request may go.
	 */
	private CompletionStage<List<Decision>> peekAll(List<KeyedPolicy> limits, boolean wait) {
		List<CompletableFuture<Decision>> peeks = new ArrayList<>(limits.size());
		for (KeyedPolicy limit : limits) {
			RateLimitPolicy policy = limit.policy();
			CompletionStage<Decision> peek;
			try {
				peek = wait ? CompletableFuture.completedFuture(this.store.inspect(limit.key(), policy))
						: this.store.inspectAsync(limit.key(), policy);
			}
			catch (RuntimeException ex) {
				peek = CompletableFuture.failedFuture(ex);
			}
			peeks.add(peek.toCompletableFuture()
				.exceptionally((ex) -> new Decision(true, policy.limit(), policy.limit(), 0, 0, 0)));
		}
		return CompletableFuture.allOf(peeks.toArray(CompletableFuture[]::new)).thenApply((done) -> {
			List<Decision> decisions = new ArrayList<>(peeks.size());
			peeks.forEach((peek) -> decisions.add(peek.join()));
			if (decisions.stream().allMatch(Decision::allowed)) {
				return decisions;
			}
			// a limit the client is not over has nothing to wait for
			return decisions.stream()
				.map((decision) -> decision.allowed() ? new Decision(false, decision.limit(), decision.remaining(), 0,
						decision.resetAfterNanos(), 0) : decision)
				.toList();
		});
	}

	/** The store's decisions, waited for if {@code wait}. */
	private CompletionStage<List<Decision>> decideAll(List<KeyedPolicy> limits, boolean wait) {
		if (!wait) {
			return this.store.decideAllAsync(limits);
		}
		try {
			return CompletableFuture.completedFuture(this.store.decideAll(limits));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/** The value of a stage complete at once, with what it failed with thrown as it was. */
	private static <T> T join(CompletionStage<T> stage) {
		try {
			return stage.toCompletableFuture().join();
		}
		catch (CompletionException ex) {
			if (ex.getCause() instanceof RuntimeException cause) {
				throw cause;
			}
			if (ex.getCause() instanceof Error cause) {
				throw cause;
			}
			throw ex;
		}
	}

	/**
	 * Starts deciding a request: its verdict at once if it is exempt or its cost is one its limits can never
	 * take, else its enforced policies with their keys, ready for the store.
	 */
	private Run begin(LimitedRequest request, LimitCatalog.Match match) {
		EndpointLimits limits = match.limits();
		if (limits.exemption().applies(request)) {
			this.metrics.exempt(limits.policies());
			return new Run(request, match, limits, Verdict.EXEMPT);
		}
		Run run = new Run(request, match, limits.forPlanOf(request, this.current), null);
		ClientLimits clientLimits = this.clientLimits;
		if (clientLimits != null) {
			Run keyedRun = run;
			EndpointLimits own = clientLimits.of(run.limits, (i) -> key(keyedRun, i));
			if (own != run.limits) {
				run = run.withLimits(own);
			}
		}
		try {
			run.keyed = keyed(run, run.enforced);
		}
		catch (RequestCost.InvalidCost ex) {
			run.verdict = new Verdict(Verdict.Action.BAD_REQUEST, new HttpHeaders(), null, ex.problem(), 0, null,
					List.of());
		}
		return run;
	}

	/**
	 * Takes the decisions of the enforced policies: returns the verdict of a rejected request, or null when the
	 * request goes on, with its delay.
	 */
	private @Nullable Verdict enforced(Run run, List<Decision> decisions, long elapsed) {
		EndpointLimits.Stack enforced = run.enforced;
		if (!decisions.get(0).allowed()) {
			HttpHeaders headers = new HttpHeaders();
			RateLimitHeaders.write(headers, enforced.policyHeader(), enforced.policies(), decisions,
					this.legacyHeaders);
			RateLimitRejection rejection = new RateLimitRejection(enforced.policies(), decisions);
			RateLimitHeaders.writeRetryAfter(headers, rejection.retryAfterSeconds());
			this.metrics.record(enforced.policies(), Outcome.REJECTED, elapsed);
			return new Verdict(Verdict.Action.REJECT, headers, rejection, null, 0, null, decisions);
		}
		run.decisions = decisions;
		run.delay = delay(decisions);
		this.metrics.record(enforced.policies(), Outcome.of(decisions), elapsed);
		this.metrics.admitted(enforced.policies(), decisions);
		return null;
	}

	/**
	 * Each shadow policy with its key at the request's cost, or null when there are none or a cost is one a
	 * policy could not take: enforced, it would answer 400 before any decision, which {@link RequestCost} logs;
	 * in shadow mode the request proceeds undecided by these policies.
	 */
	private @Nullable List<KeyedPolicy> shadowKeyed(Run run) {
		if (run.shadowed.isEmpty()) {
			return null;
		}
		try {
			return keyed(run, run.shadowed);
		}
		catch (RequestCost.InvalidCost ex) {
			return null;
		}
	}

	/**
	 * Takes the decisions of the shadow policies, made as if they were enforced, and records what they would
	 * have done; only an admission took permits, which the request keeps to give back like the enforced ones.
	 */
	private void shadowed(Run run, List<KeyedPolicy> keyed, List<Decision> decisions, long elapsed) {
		List<RateLimitPolicy> policies = run.shadowed.policies();
		if (!decisions.get(0).allowed()) {
			this.metrics.record(policies, Outcome.SHADOW_REJECTED, elapsed);
			this.shadowLog.rejected(policies);
			return;
		}
		if (Outcome.of(decisions) == Outcome.DELAYED) {
			this.metrics.record(policies, Outcome.SHADOW_DELAYED, elapsed);
			this.shadowLog.delayed(policies);
		}
		else {
			this.metrics.record(policies, Outcome.ALLOWED, elapsed);
		}
		run.shadowKeyed = keyed;
		run.shadowDecisions = decisions;
	}

	/** The verdict of a request its enforced policies let through. */
	private Verdict finish(Run run) {
		HttpHeaders headers = run.request.answered() ? new HttpHeaders() : NO_HEADERS;
		Reservation reservation = null;
		if (run.limits.counted().all()) {
			if (run.request.answered()) {
				writeHeaders(headers, run.enforced, run.decisions, run.shadowed, run.shadowDecisions);
			}
			if (!run.permits.isEmpty()) {
				reservation = new Reservation(run.limits.counted(), List.of(), List.of(), run.permits);
			}
		}
		else {
			reservation = new Reservation(run.limits.counted(), run.keyed, run.shadowKeyed, run.permits);
		}
		return new Verdict((run.delay == 0) ? Verdict.Action.PROCEED : Verdict.Action.HOLD, headers, null, null,
				run.delay, reservation, run.enforced.isEmpty() ? run.shadowDecisions : run.decisions);
	}

	/**
	 * Writes the headers of the enforced policies of an allowed request, and those of its shadow policies if
	 * {@code ratelimit.shadow-headers} asks for them and they were decided.
	 */
	private void writeHeaders(HttpHeaders headers, EndpointLimits.Stack enforced, List<Decision> decisions,
			EndpointLimits.Stack shadowed, List<Decision> shadowDecisions) {
		boolean shadow = this.shadowHeaders && !shadowDecisions.isEmpty();
		if (!shadow) {
			if (!enforced.isEmpty()) {
				RateLimitHeaders.write(headers, enforced.policyHeader(), enforced.policies(), decisions,
						this.legacyHeaders);
			}
			return;
		}
		if (enforced.isEmpty()) {
			RateLimitHeaders.write(headers, shadowed.policyHeader(), shadowed.policies(), shadowDecisions,
					this.legacyHeaders);
			return;
		}
		List<RateLimitPolicy> policies = new ArrayList<>(enforced.policies());
		policies.addAll(shadowed.policies());
		List<Decision> all = new ArrayList<>(decisions);
		all.addAll(shadowDecisions);
		RateLimitHeaders.write(headers, enforced.policyHeader() + ", " + shadowed.policyHeader(), policies, all,
				this.legacyHeaders);
	}

	/**
	 * Settles a request under limits that count only some outcomes, now that it has ended with {@code status}:
	 * a status that counts takes its permits, the shadow policies' included, as far as its client has any left.
	 */
	public void settle(Reservation kept, int status) {
		try {
			join(settle(kept, status, true));
		}
		finally {
			release(kept);
		}
	}

	/**
	 * Settles a request as {@link #settle} does, without waiting for the store, and keeps its permits in flight:
	 * for a stack that learns the status when the response commits, before the request has ended, and
	 * {@link #release releases} them once it has.
	 */
	public CompletionStage<Void> settleAsync(Reservation kept, int status) {
		return settle(kept, status, false);
	}

	/**
	 * Gives back the permits in flight of a request that has ended, however it ended; nothing the second time.
	 * @param kept what the request kept
	 */
	public void release(Reservation kept) {
		this.inFlight.release(kept.permits());
	}

	private CompletionStage<Void> settle(Reservation kept, int status, boolean wait) {
		CompletionStage<?> settled = CompletableFuture.completedFuture(null);
		if (!kept.counted().all() && kept.counted().counts(status)) {
			if (!kept.limits().isEmpty()) {
				settled = decideAll(kept.limits(), wait);
			}
			if (!kept.shadowLimits().isEmpty()) {
				settled = settled.thenCompose((taken) -> decideAll(kept.shadowLimits(), wait));
			}
		}
		return settled.thenApply((taken) -> null);
	}

	/**
	 * Each policy of {@code stack}, of the request's plan, at the request's cost, with its key; a key is
	 * computed once for the policies that share a key source, and kept for the other stack.
	 */
	private List<KeyedPolicy> keyed(Run run, EndpointLimits.Stack stack) {
		EndpointLimits limits = run.limits;
		List<KeyedPolicy> keyed = new ArrayList<>(stack.indices().size());
		for (int i : stack.indices()) {
			keyed.add(new KeyedPolicy(key(run, i), limits.policy(i, run.request, run.match.uriVariables())));
		}
		return keyed;
	}

	/** The key of the {@code i}-th policy, computed once for the policies that share a key source. */
	private String key(Run run, int i) {
		@Nullable String[] keys = run.keys;
		String key = keys[i];
		if (key != null) {
			return key;
		}
		List<KeySource> sources = run.limits.keys();
		for (int j = 0; j < keys.length && key == null; j++) {
			if (keys[j] != null && sources.get(j) == sources.get(i)) {
				key = keys[j];
			}
		}
		if (key == null) {
			key = Keys.safe(this.unresolvedKeys.key(run.request, run.limits, run.match.uriVariables(), i));
		}
		keys[i] = key;
		return key;
	}

	/** A request waits for the latest of its slots; only a leaky bucket gives one. */
	private static long delay(List<Decision> decisions) {
		long delay = 0;
		for (Decision decision : decisions) {
			delay = Math.max(delay, decision.delayNanos());
		}
		return delay;
	}

	/** One request on its way through {@link RequestDecisions}. */
	private static final class Run {

		final LimitedRequest request;

		final LimitCatalog.Match match;

		final EndpointLimits limits;

		final EndpointLimits.Stack enforced;

		final EndpointLimits.Stack shadowed;

		/** Each policy's key once computed, shared by the policies of one key source across both stacks. */
		final @Nullable String[] keys;

		/** The verdict, once known before the store decides. */
		@Nullable Verdict verdict;

		List<KeyedPolicy> keyed = List.of();

		List<Decision> decisions = List.of();

		long delay;

		/** The shadow policies' limits and decisions, empty unless they took permits. */
		List<KeyedPolicy> shadowKeyed = List.of();

		List<Decision> shadowDecisions = List.of();

		/** The permits in flight the request holds, granted before its rates were decided. */
		List<InFlightLimits.InFlightPermit> permits = List.of();

		Run(LimitedRequest request, LimitCatalog.Match match, EndpointLimits limits, @Nullable Verdict verdict) {
			this(request, match, limits, verdict, new String[limits.policies().size()]);
		}

		private Run(LimitedRequest request, LimitCatalog.Match match, EndpointLimits limits,
				@Nullable Verdict verdict, @Nullable String[] keys) {
			this.request = request;
			this.match = match;
			this.limits = limits;
			this.enforced = limits.enforced();
			this.shadowed = limits.shadowed();
			this.keys = keys;
			this.verdict = verdict;
		}

		/** This run under {@code limits}, the same policies with other values, keeping the keys computed. */
		Run withLimits(EndpointLimits limits) {
			return new Run(this.request, this.match, limits, this.verdict, this.keys);
		}

	}

	/**
	 * What the limits made of one request, for its web stack to carry out.
	 *
	 * @param action what becomes of the request
	 * @param headers the rate limit headers to write on its response, {@code Retry-After} included on a
	 * rejection; empty when there are none
	 * @param rejection why a rejected request was rejected, else null
	 * @param problem the body of a request answered with 400, else null
	 * @param delayNanos how long to hold the request, for {@link Action#HOLD}
	 * @param reservation the permits to {@link #settle} once the response's status is known, or null
	 * @param decisions the store's decisions of the enforced policies, or of the shadow ones if none is enforced;
	 * empty when the request was not decided
	 */
	public record Verdict(Action action, HttpHeaders headers, @Nullable RateLimitRejection rejection,
			@Nullable ProblemDetail problem, long delayNanos, @Nullable Reservation reservation,
			List<Decision> decisions) {

		static final Verdict EXEMPT = new Verdict(Action.PROCEED, HttpHeaders.readOnlyHttpHeaders(new HttpHeaders()),
				null, null, 0, null, List.of());

		/** What becomes of a request. */
		public enum Action {

			/** It proceeds to its handler now. */
			PROCEED,

			/** It proceeds once held for its delay. */
			HOLD,

			/** It is answered 429 with the rejection's problem. */
			REJECT,

			/** It is answered 400 with the problem: its cost is one its limits can never take. */
			BAD_REQUEST

		}

		/**
		 * Returns whether the request goes on to its handler, at once or after its delay, rather than being
		 * answered here.
		 * @return whether it goes on
		 */
		public boolean goesOn() {
			return switch (this.action) {
				case PROCEED, HOLD -> true;
				case REJECT, BAD_REQUEST -> false;
			};
		}

	}

	/**
	 * What an allowed request keeps until it ends: what it takes under limits that count only some outcomes if
	 * its status counts, the permits of its enforced policies and those of its shadow policies, each empty when
	 * there are none; and the permits in flight it holds.
	 *
	 * @param counted the outcomes that count
	 * @param limits the enforced limits that take what a counted outcome takes
	 * @param shadowLimits the shadow limits that take what a counted outcome takes
	 * @param permits the permits in flight the request holds
	 */
	public record Reservation(CountedOutcomes counted, List<KeyedPolicy> limits, List<KeyedPolicy> shadowLimits,
			List<InFlightLimits.InFlightPermit> permits) {
	}

}
