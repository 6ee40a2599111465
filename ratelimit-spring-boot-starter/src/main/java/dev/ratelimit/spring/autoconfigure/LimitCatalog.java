package dev.ratelimit.spring.autoconfigure;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.StringJoiner;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimitStore;
import dev.ratelimit.core.redis.RedisRateLimitStore;
import jakarta.servlet.http.HttpServletRequest;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;
import org.springframework.util.ClassUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.util.ServletRequestPathUtils;

/**
 * Finds the limits of a request. Once every bean exists, it reads the {@link dev.ratelimit.spring.RateLimited}
 * declarations of every handler method and the {@code ratelimit.rules}, so that a mistake stops the start and
 * the hot path only looks up what was prepared; a Redis store then runs each script it will need once.
 */
final class LimitCatalog implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(LimitCatalog.class);

	private static final boolean SPRING_SECURITY_PRESENT = ClassUtils
		.isPresent("org.springframework.security.web.FilterChainProxy", LimitCatalog.class.getClassLoader());

	/** How long the start waits for Redis to warm up. */
	private static final Duration WARM_UP_WAIT = Duration.ofSeconds(2);

	private final LimitDefinitions definitions;

	private final ObjectProvider<RequestMappingHandlerMapping> handlerMappings;

	private final RateLimitStore store;

	private final ListableBeanFactory beanFactory;

	private final Map<HandlerKey, Optional<EndpointLimits>> handlers = new ConcurrentHashMap<>();

	private volatile List<PathRule> rules = List.of();

	LimitCatalog(LimitDefinitions definitions, ObjectProvider<RequestMappingHandlerMapping> handlerMappings,
			RateLimitStore store, ListableBeanFactory beanFactory) {
		this.definitions = definitions;
		this.beanFactory = beanFactory;
		this.handlerMappings = handlerMappings;
		this.store = store;
	}

	@Override
	public void afterSingletonsInstantiated() {
		Set<EndpointLimits> active = new LinkedHashSet<>();
		List<HandlerMethod> handlerMethods = new ArrayList<>();
		this.handlerMappings.orderedStream()
			.forEach((mapping) -> handlerMethods.addAll(mapping.getHandlerMethods().values()));
		for (HandlerMethod handlerMethod : handlerMethods) {
			EndpointLimits limits = limits(handlerMethod);
			if (limits != null) {
				active.add(limits);
			}
		}
		StrayDeclarations.check(this.beanFactory, handlerMethods);
		List<PathRule> compiled = this.definitions.rules();
		compiled.forEach((rule) -> active.add(rule.limits()));
		if (SPRING_SECURITY_PRESENT) {
			SecurityAnsweredRules.warnings(this.beanFactory, compiled).forEach(logger::warn);
		}
		this.definitions.checkOverrides();
		this.rules = compiled;
		if (logger.isInfoEnabled()) {
			logger.info(describe(active));
		}
		if (this.store instanceof RedisRateLimitStore redis) {
			warmUp(redis, active);
		}
	}

	/**
	 * Opens the connection and loads the scripts before the first request, which would otherwise pay for both
	 * and could exceed the store's timeout. Waits a bounded time: should Redis not answer, requests take the
	 * failure policy until it does.
	 */
	private static void warmUp(RedisRateLimitStore store, Set<EndpointLimits> active) {
		try {
			store.warmUp(active.stream().map(EndpointLimits::policies).toList())
				.get(WARM_UP_WAIT.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			Throwable cause = (ex instanceof ExecutionException && ex.getCause() != null) ? ex.getCause() : ex;
			logger.warn("Redis did not answer at startup (" + cause + "): until it does, rate limits follow the "
					+ "store's failure policy");
		}
	}

	private String describe(Set<EndpointLimits> active) {
		TreeSet<String> sorted = new TreeSet<>();
		for (EndpointLimits limits : active) {
			for (RateLimitPolicy policy : limits.policies()) {
				sorted.add(policy.name() + " (" + policy.algorithm() + " " + policy.limit() + "/" + policy.window()
						+ ((policy.burst() != policy.limit()) ? " burst " + policy.burst() : "")
						+ ((policy.delayAfter() == 0) ? ""
								: (policy.delayAfter() == policy.burst()) ? " no delay"
										: " delay after " + policy.delayAfter())
						+ ((policy.cost() != 1) ? " cost " + policy.cost() : "") + " by " + limits.keySpec() + ")");
			}
		}
		StringJoiner policies = new StringJoiner(", ");
		sorted.forEach(policies::add);
		return "Rate limiting with " + this.store.getClass().getSimpleName() + ": "
				+ ((policies.length() > 0) ? policies : "no limits declared");
	}

	/**
	 * Returns the limits of a request and the template variables its key may read, or null if it is not
	 * limited. A handler's own declarations win; other requests take the first rule they match.
	 */
	@Nullable Match find(HttpServletRequest request, Object handler) {
		if (handler instanceof HandlerMethod handlerMethod) {
			EndpointLimits limits = limits(handlerMethod);
			if (limits != null) {
				return new Match(limits, uriVariables(request));
			}
		}
		List<PathRule> rules = this.rules;
		if (rules.isEmpty()) {
			return null;
		}
		PathContainer path = path(request);
		String method = request.getMethod();
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
			.computeIfAbsent(key, (k) -> Optional.ofNullable(this.definitions.forHandler(handlerMethod)))
			.orElse(null);
	}

	@SuppressWarnings("unchecked")
	private static Map<String, String> uriVariables(HttpServletRequest request) {
		Object variables = request.getAttribute(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE);
		return (variables != null) ? (Map<String, String>) variables : Map.of();
	}

	private static PathContainer path(HttpServletRequest request) {
		RequestPath path = ServletRequestPathUtils.hasParsedRequestPath(request)
				? ServletRequestPathUtils.getParsedRequestPath(request)
				: RequestPath.parse(request.getRequestURI(), request.getContextPath());
		return path.pathWithinApplication();
	}

	/** The limits of a request, with the template variables of the pattern it matched. */
	record Match(EndpointLimits limits, Map<String, String> uriVariables) {
	}

	private record HandlerKey(Class<?> beanType, Method method) {
	}

}
