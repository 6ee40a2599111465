package dev.ratelimit.spring.web.internal;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.spring.observability.internal.PolicyPlans;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.http.server.PathContainer;
import org.springframework.web.method.HandlerMethod;

/**
 * Finds the limits of a request. Once every bean exists, it reads the {@link dev.ratelimit.spring.RateLimited}
 * declarations of every handler method ({@link AnnotationDeclarations}) and the {@code ratelimit.rules}
 * ({@link RuleDeclarations}), checks that every override names a declared policy, reports each policy at
 * startup, and tells the {@link CurrentLimits} every endpoint's limits, so that a mistake stops the start and
 * the hot path only looks up what was prepared; a store that can warm up, such as Redis, then prepares what it
 * will need.
 */
public final class LimitCatalog implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(LimitCatalog.class);

	/** How many routes of a policy its INFO line lists. */
	private static final int ROUTES_AT_INFO = 5;

	/** How long the start waits for Redis to warm up. */
	private static final Duration WARM_UP_WAIT = Duration.ofSeconds(2);

	private final LimitSettings settings;

	private final PolicyNames names;

	private final AnnotationDeclarations annotations;

	private final RuleDeclarations ruleDeclarations;

	private final CodeDeclarations codeDeclarations;

	/** The limits of code's decisions under each declared policy, once every bean exists. */
	private volatile Map<String, EndpointLimits> codeLimits = Map.of();

	private final WebStack stack;

	private final RateLimitStore store;

	private final ListableBeanFactory beanFactory;

	private final CurrentLimits current;

	private final Map<HandlerKey, Optional<EndpointLimits>> handlers = new ConcurrentHashMap<>();

	private final Map<HandlerKey, Optional<LimitedMethod>> methods = new ConcurrentHashMap<>();

	private volatile List<PathRule> rules = List.of();

	private volatile List<PathRule> rulesBeforeSecurity = List.of();

	/** The routes each endpoint's declared limits apply to, once every bean exists. */
	private volatile Map<EndpointLimits, Set<String>> routes = Map.of();

	/**
	 * Creates the catalog of the limits that the application declares, by {@code @RateLimited} on the handlers of
	 * {@code stack} and by {@code settings}.
	 * @param settings what the configuration says of the limits
	 * @param stack the web stack whose handlers are limited
	 * @param store the store, which warms up before the first request if it can
	 * @param beanFactory the application's beans, for the resolvers that declarations name
	 * @param addresses the client addresses, past the trusted proxies
	 * @param time the time source of the log's throttled warnings
	 * @param plans where the plan of each plan's policy is registered, for the metrics
	 * @param current the limits in force, which the catalog tells every endpoint's declared limits
	 */
	public LimitCatalog(LimitSettings settings, WebStack stack, RateLimitStore store, ListableBeanFactory beanFactory,
			ClientAddresses addresses, TimeSource time, PolicyPlans plans, CurrentLimits current) {
		this.settings = settings;
		this.names = new PolicyNames();
		ResolverTypes resolvers = stack.resolvers();
		EndpointDeclarations endpoints = new EndpointDeclarations(new KeyDeclarations(beanFactory, resolvers),
				new ExemptionDeclarations(settings, beanFactory, resolvers, addresses),
				new PlanDeclarations(beanFactory, resolvers, this.names, plans), time);
		this.annotations = new AnnotationDeclarations(settings, this.names, endpoints);
		this.ruleDeclarations = new RuleDeclarations(settings, this.names, endpoints);
		this.codeDeclarations = new CodeDeclarations(settings, this.names, endpoints);
		this.beanFactory = beanFactory;
		this.stack = stack;
		this.store = store;
		this.current = current;
	}

	@Override
	public void afterSingletonsInstantiated() {
		Map<EndpointLimits, Set<String>> active = new LinkedHashMap<>();
		List<HandlerMethod> handlerMethods = new ArrayList<>();
		this.stack.forEachHandler((handler, routes) -> {
			handlerMethods.add(handler);
			EndpointLimits limits = limits(handler);
			if (limits != null) {
				active.computeIfAbsent(limits, (key) -> new TreeSet<>()).addAll(routes);
			}
		});
		declareBeanMethods(handlerMethods, active);
		List<PathRule> compiled = this.stack.servesRequests() ? this.ruleDeclarations.rules() : List.of();
		for (PathRule rule : compiled) {
			active.put(rule.limits(), Set.of(WebStack.route(rule.methods(), rule.pattern().getPatternString())
					+ (rule.beforeSecurity() ? " before Spring Security" : "")));
		}
		List<PathRule> afterSecurity = compiled.stream().filter((rule) -> !rule.beforeSecurity()).toList();
		SecurityAnsweredRules.warnings(this.stack, afterSecurity).forEach(logger::warn);
		for (EndpointLimits code : this.codeDeclarations.declare()) {
			active.put(code, Set.of(CodeDeclarations.SITE));
		}
		this.names.checkOverrides(this.settings.overrides());
		this.rules = afterSecurity;
		this.rulesBeforeSecurity = compiled.stream().filter(PathRule::beforeSecurity).toList();
		if (logger.isInfoEnabled()) {
			report(active);
		}
		warnOfUnlimitedConcurrency(active.keySet());
		this.store.warmUp().ifPresent((warmUp) -> warmUp(warmUp, active.keySet()));
		this.routes = Collections.unmodifiableMap(active);
		this.codeLimits = codeLimits(active.keySet());
		Set<EndpointLimits> all = new LinkedHashSet<>(active.keySet());
		all.addAll(this.codeLimits.values());
		this.current.start(all);
	}

	/**
	 * Declares the limits of every bean method that serves no request, so that a wrong declaration stops the
	 * start and the report lists them, and stops it at a declaration on a controller method that maps no request.
	 */
	private void declareBeanMethods(List<HandlerMethod> handlerMethods, Map<EndpointLimits, Set<String>> active) {
		Set<Method> handlers = new HashSet<>();
		handlerMethods.forEach((handler) -> handlers.add(handler.getMethod()));
		Declarations.forEachBeanClass(this.beanFactory, (name, type) -> {
			if (Declarations.controller(type)) {
				if (this.stack.servesRequests()) {
					StrayDeclarations.check(type, name, this.stack, handlers);
				}
				return;
			}
			List<Method> methods = Declarations.limitedMethods(type);
			for (Method method : methods) {
				LimitedMethod limited = limitedMethod(type, method);
				if (limited != null) {
					active.computeIfAbsent(limited.limits(), (key) -> new TreeSet<>())
						.add("calls of " + type.getSimpleName() + "." + method.getName());
				}
			}
			SelfInvocations.warn(type, methods);
		});
	}

	/**
	 * Returns the limits of a call of a bean method, or null if it is not limited.
	 * @param targetClass the class of the bean, as written
	 * @param method the method called, as declared in that class
	 */
	public @Nullable LimitedMethod limitedMethod(Class<?> targetClass, Method method) {
		return this.methods.computeIfAbsent(new HandlerKey(targetClass, method), (key) -> {
			EndpointLimits limits = Declarations.limited(targetClass, method)
					? this.annotations.forBeanMethod(targetClass, method) : null;
			return Optional.ofNullable((limits != null) ? new LimitedMethod(limits, method) : null);
		}).orElse(null);
	}

	/**
	 * The limits of code's decisions under each declared policy, by the policy's canonical name: the policy with
	 * the key the caller passes.
	 */
	private Map<String, EndpointLimits> codeLimits(Collection<EndpointLimits> active) {
		Map<String, EndpointLimits> code = new LinkedHashMap<>();
		for (EndpointLimits limits : active) {
			for (int i = 0; i < limits.policies().size(); i++) {
				RateLimitPolicy policy = limits.policies().get(i);
				String name = PolicyNames.canonical(policy.name());
				if (!code.containsKey(name)) {
					code.put(name, limits.keySpecs().get(i).equals(CodeDeclarations.KEY) ? limits
							: this.codeDeclarations.limits(policy, limits.shadow().get(i), limits.origins().get(i)));
				}
			}
		}
		return Collections.unmodifiableMap(code);
	}

	/**
	 * Returns the limits of code's decisions under a policy that an annotation, a rule or
	 * {@code ratelimit.policies} declares, by its name in any case and punctuation, as {@code ratelimit.policies}
	 * matches names; null if none does.
	 */
	public @Nullable EndpointLimits codeLimits(String name) {
		return this.codeLimits.get(PolicyNames.canonical(name));
	}

	/** Returns the names of the declared policies, as declared. */
	public List<String> declaredNames() {
		return this.codeLimits.values().stream().map((limits) -> limits.policies().get(0).name()).toList();
	}

	/** Returns the routes of each endpoint's declared limits, in the order of the startup report's sources. */
	public Map<EndpointLimits, Set<String>> routes() {
		return this.routes;
	}

	/**
	 * Logs the store, then each effective policy on a line of its own; the routes of a policy that limits many
	 * are listed in full at DEBUG only, to keep each line readable.
	 */
	private void report(Map<EndpointLimits, Set<String>> active) {
		TreeMap<String, String> lines = new TreeMap<>();
		List<String> allRoutes = new ArrayList<>();
		active.forEach((limits, routes) -> {
			String shown = String.join(", ", routes.stream().limit(ROUTES_AT_INFO).toList());
			if (routes.size() > ROUTES_AT_INFO) {
				shown += " and " + (routes.size() - ROUTES_AT_INFO) + " more, listed at DEBUG";
			}
			for (EndpointLimits planned : limits.onEveryPlan()) {
				for (int i = 0; i < planned.policies().size(); i++) {
					RateLimitPolicy policy = planned.policies().get(i);
					if (lines.containsKey(policy.name())) {
						continue;
					}
					RequestCost cost = planned.costs().get(i);
					lines.put(policy.name(), "Rate limit '" + policy.name() + "': " + describe(policy)
							+ ((cost != null && !planned.keySpecs().get(i).equals(CodeDeclarations.KEY))
									? " cost '" + cost.text() + "'" : "")
							+ (planned.plan().equals(EndpointLimits.NO_PLAN) ? "" : " on plan " + planned.plan())
							+ (planned.counted().all() ? "" : " counting " + planned.counted())
							+ (planned.shadow().get(i) ? " in shadow mode" : "")
							+ " by " + planned.keySpecs().get(i) + " on " + shown + "; from " + planned.origins().get(i));
					if (routes.size() > ROUTES_AT_INFO) {
						allRoutes.add("Rate limit '" + policy.name() + "' limits " + String.join(", ", routes));
					}
				}
			}
		});
		logger.info("Rate limiting with " + this.store.getClass().getSimpleName() + ": "
				+ (lines.isEmpty() ? "no limits declared" : lines.size() + " policies"));
		lines.values().forEach(logger::info);
		if (logger.isDebugEnabled()) {
			allRoutes.forEach(logger::debug);
		}
	}

	/** Says which declared concurrencies limit nothing, on a store that keeps no limits in flight. */
	private void warnOfUnlimitedConcurrency(Collection<EndpointLimits> active) {
		if (this.store.inFlight().isPresent()) {
			return;
		}
		Set<String> names = new TreeSet<>();
		for (EndpointLimits limits : active) {
			for (EndpointLimits planned : limits.onEveryPlan()) {
				for (int i = 0; i < planned.policies().size(); i++) {
					if (planned.inFlight().get(i) > 0) {
						names.add(planned.policies().get(i).name());
					}
				}
			}
		}
		if (!names.isEmpty()) {
			logger.warn("Rate limits " + names + " declare a concurrency, but " + this.store.getClass().getSimpleName()
					+ " keeps no limits in flight: their requests in flight are not limited, only their rates");
		}
	}

	/** The values of a policy, as the startup report and the log write them. */
	public static String describe(RateLimitPolicy policy) {
		return policy.algorithm() + " " + policy.limit() + "/"
				+ ((policy.calendar() != null) ? policy.calendar() : policy.window())
				+ ((policy.burst() != policy.limit()) ? " burst " + policy.burst() : "")
				+ ((policy.delayAfter() == 0) ? ""
						: (policy.delayAfter() == policy.burst()) ? " no delay" : " delay after " + policy.delayAfter())
				+ ((policy.cost() != 1) ? " cost " + policy.cost() : "")
				+ (policy.penalty().isZero() ? "" : " penalty " + policy.penalty());
	}

	/**
	 * Opens the connection and loads the scripts or functions before the first request, which would otherwise pay
	 * for both and could exceed the store's timeout. Waits a bounded time: should the store's server (Redis,
	 * PostgreSQL) not answer within it, requests take the failure policy until it does, and the warm-up goes on in
	 * the background; only a warm-up that fails is a warning, as a slow one on a busy machine is no fault.
	 */
	private static void warmUp(RateLimitStore.WarmUp warmUp, Collection<EndpointLimits> active) {
		long started = System.nanoTime();
		CompletableFuture<Void> warmed = warmUp.warmUp(active.stream().map(EndpointLimits::policies).toList())
			.toCompletableFuture();
		try {
			warmed.get(WARM_UP_WAIT.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException ex) {
			warmUpFailed((ex.getCause() != null) ? ex.getCause() : ex);
		}
		catch (TimeoutException ex) {
			warmed.whenComplete((none, failure) -> {
				if (failure != null) {
					warmUpFailed(failure);
				}
				else {
					logger.info("The rate limit store answered at startup after "
							+ TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)
							+ " ms; until then, rate limits followed the store's failure policy");
				}
			});
		}
	}

	private static void warmUpFailed(Throwable cause) {
		logger.warn("The rate limit store did not answer at startup (" + cause + "): until it does, rate limits "
				+ "follow the store's failure policy");
	}

	/**
	 * Returns the limits of a request and the template variables its key may read, or null if it is not
	 * limited. A handler's own declarations win; other requests take the first rule they match.
	 */
	public @Nullable Match find(LimitedRequest request, Object handler, Supplier<Map<String, String>> uriVariables) {
		if (handler instanceof HandlerMethod handlerMethod) {
			EndpointLimits limits = limits(handlerMethod);
			if (limits != null) {
				return new Match(limits, uriVariables.get());
			}
		}
		return find(request, this.rules);
	}

	/**
	 * Returns the limits of the first rule decided before Spring Security that a request matches, or null if
	 * none does.
	 */
	public @Nullable Match findBeforeSecurity(LimitedRequest request) {
		return find(request, this.rulesBeforeSecurity);
	}

	private static @Nullable Match find(LimitedRequest request, List<PathRule> rules) {
		if (rules.isEmpty()) {
			return null;
		}
		PathContainer path = request.path();
		String method = request.method();
		for (PathRule rule : rules) {
			Map<String, String> variables = rule.match(method, path);
			if (variables != null) {
				return new Match(rule.limits(), variables);
			}
		}
		return null;
	}

	private @Nullable EndpointLimits limits(HandlerMethod handlerMethod) {
		HandlerKey key = new HandlerKey(handlerMethod.getBeanType(), handlerMethod.getMethod());
		return this.handlers
			.computeIfAbsent(key, (k) -> Optional.ofNullable(this.annotations.forHandler(handlerMethod)))
			.orElse(null);
	}

	/** The limits of a request, with the template variables of the pattern it matched. */
	public record Match(EndpointLimits limits, Map<String, String> uriVariables) {
	}

	private record HandlerKey(Class<?> beanType, Method method) {
	}

}
