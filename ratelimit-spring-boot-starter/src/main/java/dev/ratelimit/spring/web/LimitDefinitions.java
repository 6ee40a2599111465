package dev.ratelimit.spring.web;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Pattern;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.spring.RateLimited;
import dev.ratelimit.spring.autoconfigure.RateLimitProperties;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.http.HttpMethod;
import org.springframework.util.StringUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.util.pattern.PatternParseException;

/**
 * The one place where {@link RateLimited} declarations, {@code ratelimit.policies} overrides and
 * {@code ratelimit.rules} become core {@link RateLimitPolicy} records and {@link KeySource key sources}. Every
 * mistake is reported here, as a {@link RateLimitConfigurationException} naming the declaration or property
 * and the value, so that nothing invalid reaches the hot path and nothing silently goes unlimited.
 */
public final class LimitDefinitions {

	private static final HttpMethod[] STANDARD_METHODS = HttpMethod.values();

	private static final String RULES = "ratelimit.rules";

	private static final Pattern PLAN_NAME = Pattern.compile("[A-Za-z0-9_-]{1,50}");

	private final RateLimitProperties properties;

	private final PolicyOverrides overrides;

	private final BeanFactory beanFactory;

	private final ResolverTypes resolvers;

	private final ClientAddresses addresses;

	private final int ipv6Prefix;

	private final Networks exempt;

	private final @Nullable String exemptIf;

	private final TimeSource time;

	private final PolicyPlans policyPlans;

	private final SpelExpressionParser parser = new SpelExpressionParser();

	/** Where each policy name was declared, to reject a name declared twice. */
	private final Map<String, String> sites = new LinkedHashMap<>();

	/** The name of each canonical name, to reject two names that overrides could not tell apart. */
	private final Map<String, String> canonicalNames = new HashMap<>();

	/** Class-level declarations, shared by every handler method of the class. */
	private final Map<Class<?>, EndpointLimits> classLimits = new HashMap<>();

	public LimitDefinitions(RateLimitProperties properties, PolicyOverrides overrides, BeanFactory beanFactory,
			ResolverTypes resolvers, ClientAddresses addresses, TimeSource time, PolicyPlans policyPlans) {
		this.resolvers = resolvers;
		this.properties = properties;
		this.time = time;
		this.policyPlans = policyPlans;
		this.overrides = overrides;
		this.beanFactory = beanFactory;
		this.addresses = addresses;
		this.ipv6Prefix = ipv6Prefix("ratelimit.client-address.ipv6-prefix",
				properties.getClientAddress().getIpv6Prefix());
		this.exempt = Networks.parse("ratelimit.exempt", properties.getExempt());
		this.exemptIf = blankToNull(properties.getExemptIf());
		if (this.exemptIf != null) {
			condition(Exemption.none(addresses), "ratelimit.exempt-if", this.exemptIf,
					new AddressKey(addresses, this.ipv6Prefix), new ArrayList<>());
		}
	}

	/** Returns the limits of a handler method: its own declarations, else its class's, else none. */
	synchronized @Nullable EndpointLimits forHandler(HandlerMethod handlerMethod) {
		Class<?> beanType = handlerMethod.getBeanType();
		Method method = handlerMethod.getMethod();
		List<MergedAnnotation<RateLimited>> onMethod = declarations(
				MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY));
		if (!onMethod.isEmpty()) {
			String site = "@RateLimited on " + beanType.getName() + "." + method.getName() + "("
					+ StringUtils.arrayToCommaDelimitedString(
							Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName).toArray())
					+ ")";
			return declare(onMethod, beanType.getSimpleName() + "." + method.getName(), site,
					ParameterBinding.of(handlerMethod));
		}
		List<MergedAnnotation<RateLimited>> onClass = declarations(
				MergedAnnotations.from(beanType, SearchStrategy.TYPE_HIERARCHY));
		if (onClass.isEmpty()) {
			return null;
		}
		Class<?> declaringClass = (Class<?>) onClass.get(0).getSource();
		Class<?> owner = (declaringClass != null) ? declaringClass : beanType;
		EndpointLimits limits = this.classLimits.get(owner);
		if (limits == null) {
			limits = declare(onClass, owner.getSimpleName(), "@RateLimited on class " + owner.getName(), List.of());
			this.classLimits.put(owner, limits);
		}
		return limits;
	}

	private static List<MergedAnnotation<RateLimited>> declarations(MergedAnnotations annotations) {
		List<MergedAnnotation<RateLimited>> found = annotations.stream(RateLimited.class).toList();
		if (found.isEmpty()) {
			return found;
		}
		// the closest declaring element wins, as a method's own annotations replace those it overrides
		Object source = found.get(0).getSource();
		return found.stream().filter((annotation) -> annotation.getSource() == source).toList();
	}

	private EndpointLimits declare(List<MergedAnnotation<RateLimited>> annotations, String defaultName, String site,
			List<ParameterBinding> bindings) {
		List<RateLimitPolicy> policies = new ArrayList<>();
		List<Boolean> shadows = new ArrayList<>();
		List<String> origins = new ArrayList<>();
		List<String> keySpecs = new ArrayList<>();
		List<Map<String, RateLimitPolicy>> plans = new ArrayList<>();
		List<@Nullable Expression> costs = new ArrayList<>();
		ClientTerms terms = null;
		String termsSite = null;
		String termsProperty = site;
		CountedOutcomes counted = null;
		String countedSite = null;
		for (int i = 0; i < annotations.size(); i++) {
			MergedAnnotation<RateLimited> annotation = annotations.get(i);
			String name = annotation.getString("name");
			if (name.isEmpty()) {
				name = (annotations.size() == 1) ? defaultName : defaultName + "." + (i + 1);
			}
			PolicyOverrides.Entry entry = this.overrides.get(name);
			RateLimitProperties.Policy override = (entry != null) ? entry.values() : null;
			String where = site + ((entry != null) ? " with " + entry.property() : "");
			String action = "Fix the declaration, or its values under ratelimit.policies." + name + ".";
			RateLimitPolicy policy = policy(where, action, annotation, name, override);
			claim(policy.name(), site, action);
			String planProperty = "ratelimit.policies." + ((entry != null) ? entry.name() : name) + ".plans";
			plans.add(plans(where, action, site, policy, annotation.synthesize().plans(),
					(override != null) ? override.getPlans() : Map.of(), planProperty));
			costs.add(costExpression(where, action, policy, plans.get(plans.size() - 1),
					(override != null && override.getCostExpression() != null) ? override.getCostExpression()
							: annotation.getString("costExpression")));
			String key = normalizeKey((override != null && override.getKey() != null) ? override.getKey()
					: annotation.getString("key"));
			ClientTerms policyTerms = clientTerms((entry != null) ? entry.property() : site, override);
			if (terms == null) {
				terms = policyTerms;
				termsSite = where;
				termsProperty = (entry != null) ? entry.property() : site;
			}
			else if (!terms.equals(policyTerms)) {
				throw new RateLimitConfigurationException(site + " stacks limits with different client terms, "
						+ terms + " (" + termsSite + ") and " + policyTerms + " (" + where
						+ "): stacked limits are decided together, for one client.",
						"Give every limit of the declaration the same ipv6-prefix, exempt and exempt-if.");
			}
			CountedOutcomes policyCounted = counted(where, action, override, annotation);
			if (counted == null) {
				counted = policyCounted;
				countedSite = where;
			}
			else if (!counted.equals(policyCounted)) {
				throw new RateLimitConfigurationException(site + " stacks limits that count different outcomes, "
						+ counted + " (" + countedSite + ") and " + policyCounted + " (" + where
						+ "): stacked limits are decided together, and given back together.",
						"Give every limit of the declaration the same countStatus.");
			}
			policies.add(policy);
			shadows.add(shadow((override != null) ? override.getShadow() : null));
			origins.add(where + ((entry != null) ? " (" + entry.origin() + ")" : ""));
			keySpecs.add(key);
		}
		return limits(policies, shadows, origins, keySpecs, plans, costs, terms, termsProperty, site, action(site),
				bindings, counted);
	}

	/** Returns whether a policy is in shadow mode: as its own setting says, else as ratelimit.shadow does. */
	private boolean shadow(@Nullable Boolean own) {
		return (own != null) ? own : this.properties.isShadow();
	}

	/** Returns the outcomes that count against a declared policy: its override's if set, else its own. */
	private static CountedOutcomes counted(String where, String action, RateLimitProperties.@Nullable Policy override,
			MergedAnnotation<RateLimited> annotation) {
		if (override != null && !override.getCountStatus().isEmpty()) {
			return CountedOutcomes.of(where + " count-status", action, override.getCountStatus());
		}
		return CountedOutcomes.of(where + " countStatus", action,
				Arrays.stream(annotation.getIntArray("countStatus")).boxed().toList());
	}

	/**
	 * The limits of one endpoint; policies declared with the same key share one key source, and each plan that
	 * a policy knows gets the endpoint's limits with that plan's policies.
	 */
	private EndpointLimits limits(List<RateLimitPolicy> policies, List<Boolean> shadows, List<String> origins,
			List<String> keySpecs, List<Map<String, RateLimitPolicy>> plans, List<@Nullable Expression> costExpressions,
			ClientTerms terms, String property, String keySite, String action, List<ParameterBinding> bindings,
			CountedOutcomes counted) {
		AddressKey address = new AddressKey(this.addresses, terms.ipv6Prefix());
		List<Object> consulted = new ArrayList<>();
		Exemption exemption = Exemption.none(this.addresses).orIn(this.exempt).orIn(terms.exempt());
		if (this.exemptIf != null) {
			exemption = condition(exemption, "ratelimit.exempt-if", this.exemptIf, address, consulted);
		}
		if (terms.exemptIf() != null) {
			exemption = condition(exemption, property + ".exempt-if", terms.exemptIf(), address, consulted);
		}
		Map<String, KeySource> sources = new HashMap<>();
		List<KeySource> keys = new ArrayList<>(keySpecs.size());
		for (String keySpec : keySpecs) {
			KeySource source = sources.get(keySpec);
			if (source == null) {
				source = keySource(keySpec, keySite, action, bindings, address, consulted);
				sources.put(keySpec, source);
			}
			keys.add(source);
		}
		List<@Nullable RequestCost> costs = new ArrayList<>(costExpressions.size());
		for (int i = 0; i < costExpressions.size(); i++) {
			Expression expression = costExpressions.get(i);
			costs.add((expression != null)
					? new RequestCost(expression, bindings, address, this.time, shadows.get(i)) : null);
		}
		Set<String> planNames = new LinkedHashSet<>();
		plans.forEach((byPlan) -> planNames.addAll(byPlan.keySet()));
		ResolverTypes.Resolver<@Nullable String> planResolver = null;
		if (!planNames.isEmpty()) {
			planResolver = planResolver(keySite, planNames);
			consulted.add(planResolver.bean());
		}
		EndpointLimits limits = new EndpointLimits(policies, shadows, origins, keySpecs, keys, address, exemption,
				counted, EndpointLimits.NO_PLAN, null, costs, consulted);
		if (planResolver == null) {
			return limits;
		}
		Map<String, EndpointLimits> byPlan = new LinkedHashMap<>();
		for (String plan : planNames) {
			List<RateLimitPolicy> planPolicies = new ArrayList<>(policies.size());
			for (int i = 0; i < policies.size(); i++) {
				planPolicies.add(plans.get(i).getOrDefault(plan, policies.get(i)));
			}
			byPlan.put(plan, limits.onPlan(plan, planPolicies));
		}
		return limits.withPlans(new EndpointPlans(planResolver.read(), byPlan, this.time));
	}

	/**
	 * Returns the policy of each plan of a declaration, by the plan's canonical name: the annotation's plans
	 * with the values of {@code overrides} over them, and the plans that only the overrides name.
	 */
	private Map<String, RateLimitPolicy> plans(String where, String action, String site, RateLimitPolicy policy,
			RateLimited.Plan[] declared, Map<String, RateLimitProperties.Plan> overrides, String property) {
		Map<String, RateLimited.@Nullable Plan> annotated = new LinkedHashMap<>();
		Map<String, String> written = new LinkedHashMap<>();
		for (RateLimited.Plan plan : declared) {
			String canonical = planName(where, action, plan.name(), written);
			annotated.put(canonical, plan);
		}
		Map<String, RateLimitProperties.@Nullable Plan> overridden = new LinkedHashMap<>();
		Map<String, String> overrideNames = new LinkedHashMap<>();
		overrides.forEach((name, plan) -> overridden.put(planName(property, "Fix " + property + "." + name + ".",
				name, overrideNames), plan));
		Set<String> names = new LinkedHashSet<>(annotated.keySet());
		names.addAll(overridden.keySet());
		Map<String, RateLimitPolicy> plans = new LinkedHashMap<>();
		for (String plan : names) {
			RateLimited.Plan annotation = annotated.get(plan);
			RateLimitProperties.Plan override = overridden.get(plan);
			String planWhere = where + " plan '" + plan + "'"
					+ ((override != null) ? " with " + property + "." + overrideNames.get(plan) : "");
			long limit = (override != null && override.getLimit() != null) ? override.getLimit()
					: (annotation != null) ? annotation.limit() : policy.limit();
			String windowText = (override != null && override.getWindow() != null) ? override.getWindow()
					: (annotation != null) ? annotation.window() : "";
			Duration window = windowText.isEmpty() ? policy.window() : window(planWhere, action, windowText);
			long burst = (override != null && override.getBurst() != null) ? override.getBurst()
					: (annotation != null && annotation.burst() != 0) ? annotation.burst() : limit;
			// a queue that passes at once (noDelay) passes the plan's whole queue at once
			long delayAfter = (policy.delayAfter() != 0 && policy.delayAfter() == policy.burst()) ? burst
					: policy.delayAfter();
			String name = policy.name() + ":" + plan;
			RateLimitPolicy planPolicy = parse("Invalid " + planWhere + ": ", action, () -> new RateLimitPolicy(name,
					policy.algorithm(), limit, window, burst, policy.cost(), delayAfter));
			claim(name, site, action);
			this.policyPlans.register(name, plan);
			plans.put(plan, planPolicy);
		}
		return plans;
	}

	/** Checks a plan's name and returns its canonical form, rejecting two names of one canonical form. */
	private static String planName(String where, String action, String name, Map<String, String> written) {
		if (!PLAN_NAME.matcher(name).matches()) {
			throw new RateLimitConfigurationException("Invalid " + where + ": plan name '" + name
					+ "' is invalid: use 1 to 50 letters, digits or the characters - _.", action);
		}
		String canonical = PolicyOverrides.canonical(name);
		String previous = written.putIfAbsent(canonical, name);
		if (previous != null) {
			throw new RateLimitConfigurationException("Invalid " + where + ": plans '" + previous + "' and '" + name
					+ "' differ only in case or punctuation, which plans ignore.", action
							+ " Give each plan a name that differs in its letters or digits.");
		}
		return canonical;
	}

	/** The application's one plan resolver, which an endpoint with plans needs. */
	private ResolverTypes.Resolver<@Nullable String> planResolver(String site, Set<String> plans) {
		return planResolver(this.resolvers.plans(), site, plans);
	}

	private <T> ResolverTypes.Resolver<@Nullable String> planResolver(ResolverTypes.Type<T, @Nullable String> type,
			String site, Set<String> plans) {
		ObjectProvider<T> resolvers = type.beans(this.beanFactory);
		T resolver = resolvers.getIfUnique();
		if (resolver != null) {
			return type.adapt(resolver);
		}
		long count = resolvers.stream().count();
		String name = type.name();
		throw new RateLimitConfigurationException(site + " declares plans " + plans + ", but the application has "
				+ ((count == 0) ? "no " + name + " bean" : count + " " + name + " beans")
				+ " to tell which plan a request is on.",
				"Define exactly one " + name + " bean, or remove the plans.");
	}

	/**
	 * Checks a cost expression: not together with a constant cost, and a cost up to the capacity computes
	 * exactly under the policy and each of its plans. Returns it parsed, or null if there is none.
	 */
	private @Nullable Expression costExpression(String where, String action, RateLimitPolicy policy,
			Map<String, RateLimitPolicy> plans, String expression) {
		if (expression.isBlank()) {
			return null;
		}
		String text = expression.trim();
		if (policy.cost() != 1) {
			throw new RateLimitConfigurationException("Invalid " + where + ": cost (" + policy.cost()
					+ ") and costExpression ('" + text + "') are both set: a request's cost is one or the other.",
					action + " Keep one of them.");
		}
		Expression parsed = spel("Invalid " + where + ": costExpression ", text, action);
		List<RateLimitPolicy> all = new ArrayList<>(plans.values());
		all.add(0, policy);
		for (RateLimitPolicy each : all) {
			parse("Invalid " + where + ": a cost up to the capacity: ", action, () -> each.withCost(each.capacity()));
		}
		return parsed;
	}

	/** Parses {@code text}, or fails the start with {@code invalid} and the parser's message. */
	private Expression spel(String invalid, String text, String action) {
		try {
			return this.parser.parseExpression(text);
		}
		catch (ParseException ex) {
			throw new RateLimitConfigurationException(
					invalid + "'" + text + "' is not a SpEL expression: " + ex.getMessage(), action);
		}
	}

	/**
	 * Returns the client terms of a policy: the values of {@code property} where they are set, else the
	 * defaults of {@code ratelimit.client-address}.
	 */
	private ClientTerms clientTerms(String property, RateLimitProperties.@Nullable Policy values) {
		if (values == null) {
			return new ClientTerms(this.ipv6Prefix, Networks.NONE, null);
		}
		int prefix = (values.getIpv6Prefix() != null) ? ipv6Prefix(property + ".ipv6-prefix", values.getIpv6Prefix())
				: this.ipv6Prefix;
		return new ClientTerms(prefix, Networks.parse(property + ".exempt", values.getExempt()),
				blankToNull(values.getExemptIf()));
	}

	private static int ipv6Prefix(String property, int prefix) {
		if (prefix < 1 || prefix > 128) {
			throw new RateLimitConfigurationException("Invalid " + property + ": " + prefix
					+ " is not a number of bits of an IPv6 address, from 1 to 128.",
					"Update " + property + " in your application's configuration; 64 keys every /64 network as one client.");
		}
		return prefix;
	}

	private Exemption condition(Exemption exemption, String property, String spec, AddressKey address,
			List<Object> consulted) {
		String action = "Update " + property + " in your application's configuration.";
		if (spec.startsWith("spel:") && spec.length() > "spel:".length()) {
			return exemption.orIf(spec, spel("Invalid " + property + ": ", spec.substring("spel:".length()), action),
					address);
		}
		if (spec.startsWith("bean:") && spec.length() > "bean:".length()) {
			String bean = spec.substring("bean:".length()).trim();
			try {
				ResolverTypes.Resolver<Boolean> condition = this.resolvers.exemptions().bean(this.beanFactory, bean);
				consulted.add(condition.bean());
				return exemption.orIf(spec, condition.read()::apply);
			}
			catch (BeansException ex) {
				String type = this.resolvers.exemptions().name();
				throw new RateLimitConfigurationException("Invalid " + property + ": '" + spec + "' names no " + type
						+ " bean: " + ex.getMessage(),
						"Define a " + type + " bean named '" + bean + "', or fix the name in " + property + ".");
			}
		}
		throw new RateLimitConfigurationException("Invalid " + property + ": '" + spec
				+ "' is not a condition; use spel:<expression> or bean:<name>.", action);
	}

	private static @Nullable String blankToNull(@Nullable String text) {
		return (text == null || text.isBlank()) ? null : text.trim();
	}

	/**
	 * What says who the client of a limit is and whether it is exempt, which limits decided together share.
	 * @param ipv6Prefix the leading bits of an IPv6 client address that identify the client
	 * @param exempt the exempt networks of the policy itself
	 * @param exemptIf the exempting condition of the policy itself, or null
	 */
	private record ClientTerms(int ipv6Prefix, Networks exempt, @Nullable String exemptIf) {

		@Override
		public String toString() {
			return "ipv6-prefix " + this.ipv6Prefix + ", exempt " + this.exempt + ", exempt-if "
					+ ((this.exemptIf != null) ? "'" + this.exemptIf + "'" : "none");
		}

	}

	private RateLimitPolicy policy(String where, String action, MergedAnnotation<RateLimited> annotation,
			String name, RateLimitProperties.@Nullable Policy override) {
		long limit = (override != null && override.getLimit() != null) ? override.getLimit()
				: annotation.getLong("limit");
		Duration window = window(where, action, (override != null && override.getWindow() != null)
				? override.getWindow() : annotation.getString("window"));
		Algorithm algorithm = (override != null && override.getAlgorithm() != null) ? override.getAlgorithm()
				: algorithm(where, action, annotation.getEnumArray("algorithm", Algorithm.class));
		long declaredBurst = annotation.getLong("burst");
		long burst = (override != null && override.getBurst() != null) ? override.getBurst()
				: (declaredBurst != 0) ? declaredBurst : limit;
		long cost = (override != null && override.getCost() != null) ? override.getCost()
				: annotation.getLong("cost");
		long delayAfter;
		if (override != null && (override.getDelayAfter() != null || override.getNoDelay() != null)) {
			delayAfter = delayAfter(where, action, algorithm, burst, override.getDelayAfter(), "delay-after",
					Boolean.TRUE.equals(override.getNoDelay()), "no-delay");
		}
		else {
			long declared = annotation.getLong("delayAfter");
			delayAfter = delayAfter(where, action, algorithm, burst, (declared != 0) ? declared : null,
					"delayAfter", annotation.getBoolean("noDelay"), "noDelay");
		}
		return parse("Invalid " + where + ": ", action,
				() -> new RateLimitPolicy(name, algorithm, limit, window, burst, cost, delayAfter));
	}

	/**
	 * Returns how many queued requests pass without waiting, checking the two ways to say it with the names
	 * the user wrote them under.
	 */
	private static long delayAfter(String where, String action, Algorithm algorithm, long burst,
			@Nullable Long delayAfter, String delayAfterName, boolean noDelay, String noDelayName) {
		if (delayAfter == null && !noDelay) {
			return 0;
		}
		if (delayAfter != null && noDelay) {
			throw new RateLimitConfigurationException("Invalid " + where + ": " + delayAfterName + " (" + delayAfter
					+ ") and " + noDelayName + " are both set: " + noDelayName + " passes the whole burst at once, "
					+ delayAfterName + " only its first requests.", action + " Keep one of them.");
		}
		String mode = noDelay ? noDelayName : delayAfterName + " (" + delayAfter + ")";
		if (algorithm != Algorithm.LEAKY_BUCKET) {
			throw new RateLimitConfigurationException("Invalid " + where + ": " + mode
					+ " applies only to LEAKY_BUCKET, the algorithm that queues requests; " + algorithm
					+ " rejects them instead.", action);
		}
		if (noDelay) {
			return burst;
		}
		// a burst below 1 is reported by the policy itself
		if (delayAfter < 0 || (burst >= 1 && delayAfter > burst)) {
			throw new RateLimitConfigurationException("Invalid " + where + ": " + delayAfterName
					+ " must be between 0 and the burst (" + burst + "), was " + delayAfter + ".", action);
		}
		return delayAfter;
	}

	/** Parses a window of the annotation or of the configuration, both in one syntax. */
	private static Duration window(String where, String action, String window) {
		return parse("Invalid " + where + ": window ", action, () -> RateLimitPolicy.parseWindow(window));
	}

	private Algorithm algorithm(String where, String action, Algorithm[] declared) {
		if (declared.length > 1) {
			throw new RateLimitConfigurationException(
					"Invalid " + where + ": algorithm names " + declared.length + " algorithms, at most one is allowed.",
					action);
		}
		return (declared.length == 1) ? declared[0] : this.properties.getDefaultAlgorithm();
	}

	/** Returns the limits of every rule, in order. */
	synchronized List<PathRule> rules() {
		List<PathRule> rules = new ArrayList<>();
		List<RateLimitProperties.Rule> declared = this.properties.getRules();
		for (int i = 0; i < declared.size(); i++) {
			rules.add(rule(RULES + "[" + i + "]", declared.get(i), i));
		}
		return rules;
	}

	private PathRule rule(String property, RateLimitProperties.Rule rule, int index) {
		String action = "Update " + property + " in your application's configuration.";
		String path = required(property, action, "path", rule.getPath());
		if (!path.startsWith("/")) {
			throw new RateLimitConfigurationException("Invalid " + property + ".path: '" + path
					+ "' does not start with '/', so no request path can ever match it.", action
							+ " Write the path from the context path on, such as /" + path + ".");
		}
		PathPattern pattern;
		try {
			pattern = PathPatternParser.defaultInstance.parse(path);
		}
		catch (PatternParseException ex) {
			throw new RateLimitConfigurationException(
					"Invalid " + property + ".path: '" + path + "' is not a path pattern: " + ex.getMessage(), action);
		}
		Set<String> methods = new LinkedHashSet<>();
		for (String method : rule.getMethods()) {
			methods.add(httpMethod(property, action, method));
		}
		// both web stacks serve HEAD with the GET handler, so a HEAD request costs what the GET would
		if (methods.contains(HttpMethod.GET.name())) {
			methods.add(HttpMethod.HEAD.name());
		}
		long limit = required(property, action, "limit", rule.getLimit());
		Duration window = window(property, action, required(property, action, "window", rule.getWindow()));
		Algorithm algorithm = (rule.getAlgorithm() != null) ? rule.getAlgorithm()
				: this.properties.getDefaultAlgorithm();
		long burst = (rule.getBurst() != null) ? rule.getBurst() : limit;
		String name = (rule.getName() != null) ? rule.getName() : "rule-" + index;
		long delayAfter = delayAfter(property, action, algorithm, burst, rule.getDelayAfter(), "delay-after",
				Boolean.TRUE.equals(rule.getNoDelay()), "no-delay");
		RateLimitPolicy policy = parse("Invalid " + property + ": ", action,
				() -> new RateLimitPolicy(name, algorithm, limit, window, burst,
						(rule.getCost() != null) ? rule.getCost() : 1, delayAfter));
		claim(name, property, action);
		Map<String, RateLimitPolicy> plans = plans(property, action, property, policy, new RateLimited.Plan[0],
				rule.getPlans(), property + ".plans");
		Expression cost = costExpression(property, action, policy, plans,
				(rule.getCostExpression() != null) ? rule.getCostExpression() : "");
		String keySpec = normalizeKey((rule.getKey() != null) ? rule.getKey() : "ip");
		if (rule.isBeforeSecurity() && keySpec.equals(KeySource.USER)) {
			throw new RateLimitConfigurationException("Invalid " + property + ".key: 'user' is never known to a rule "
					+ "with before-security, which is decided before Spring Security authenticates the request.",
					action + " Key it by ip, a header or a bean, or decide it after Spring Security.");
		}
		CountedOutcomes counted = CountedOutcomes.of(property + ".count-status", action, rule.getCountStatus());
		List<@Nullable Expression> costs = new ArrayList<>();
		costs.add(cost);
		// ratelimit.policies.<name>.shadow turns a rule's shadow mode on and off as it does a declaration's
		PolicyOverrides.Entry entry = this.overrides.get(name);
		boolean overridden = entry != null && entry.values().getShadow() != null;
		boolean shadow = shadow(overridden ? entry.values().getShadow() : rule.getShadow());
		String origin = property + (overridden ? " with " + entry.property() + ".shadow (" + entry.origin() + ")" : "");
		return new PathRule(property, pattern, methods, limits(List.of(policy), List.of(shadow), List.of(origin),
				List.of(keySpec), List.of(plans), costs, clientTerms(property, rule), property, property + ".key",
				action, List.of(), counted), rule.isBeforeSecurity());
	}

	private static String httpMethod(String property, String action, String method) {
		String upper = method.trim().toUpperCase(Locale.ROOT);
		for (HttpMethod standard : STANDARD_METHODS) {
			if (standard.name().equals(upper)) {
				return upper;
			}
		}
		throw new RateLimitConfigurationException(
				"Invalid " + property + ".methods: '" + method + "' is not an HTTP method.", action);
	}

	private static <T> T required(String property, String action, String field, @Nullable T value) {
		if (value == null || (value instanceof String text && text.isBlank())) {
			throw new RateLimitConfigurationException(property + "." + field + " is required.", action);
		}
		return value;
	}

	/** Checks, once every declaration was seen, that each policy override matches a declaration. */
	synchronized void checkOverrides() {
		List<String> declared = new ArrayList<>();
		List<String> ruled = new ArrayList<>();
		this.sites.forEach((name, site) -> (site.startsWith(RULES) ? ruled : declared).add(name));
		this.overrides.checkMatched(declared, ruled);
	}

	private void claim(String name, String site, String action) {
		String previous = this.sites.putIfAbsent(name, site);
		if (previous != null && !previous.equals(site)) {
			throw new RateLimitConfigurationException("Policy name '" + name + "' is declared twice: by " + previous
					+ " and by " + site + ". Each policy's name identifies its state, headers and metrics.", action
							+ " Give each policy a distinct name.");
		}
		String alike = this.canonicalNames.putIfAbsent(PolicyOverrides.canonical(name), name);
		if (alike != null && !alike.equals(name)) {
			throw new RateLimitConfigurationException("Policy names '" + alike + "' (" + this.sites.get(alike)
					+ ") and '" + name + "' (" + site + ") differ only in case or punctuation, which "
					+ "ratelimit.policies ignores: an override could not tell them apart.", action
							+ " Give each policy a name that differs in its letters or digits.");
		}
	}

	private static String normalizeKey(String key) {
		String trimmed = key.trim();
		return trimmed.isEmpty() ? "ip" : trimmed;
	}

	private KeySource keySource(String spec, String site, String action, List<ParameterBinding> bindings,
			AddressKey address, List<Object> consulted) {
		if (spec.equals("ip")) {
			return KeySource.clientAddress(address);
		}
		if (spec.equals(KeySource.USER)) {
			return KeySource.user(address);
		}
		if (spec.equals("global")) {
			return KeySource.global();
		}
		if (spec.startsWith("header:") && spec.length() > "header:".length()) {
			return KeySource.header(spec.substring("header:".length()).trim(), address);
		}
		if (spec.startsWith("bean:") && spec.length() > "bean:".length()) {
			String bean = spec.substring("bean:".length()).trim();
			try {
				ResolverTypes.Resolver<@Nullable String> resolver = this.resolvers.keys().bean(this.beanFactory, bean);
				consulted.add(resolver.bean());
				return KeySource.resolver(resolver.read(), address);
			}
			catch (BeansException ex) {
				String type = this.resolvers.keys().name();
				throw new RateLimitConfigurationException("Invalid key of " + site + ": '" + spec + "' names no " + type
						+ " bean: " + ex.getMessage(), "Define a " + type + " bean named '" + bean + "', or fix the name.");
			}
		}
		if (spec.startsWith("spel:") && spec.length() > "spel:".length()) {
			return KeySource.expression(spel("Invalid key of " + site + ": ", spec.substring("spel:".length()), action),
					bindings, address);
		}
		throw new RateLimitConfigurationException("Invalid key of " + site + ": '" + spec
				+ "' is not a key; use ip, user, global, header:<name>, bean:<name> or spel:<expression>.", action);
	}

	private static String action(String site) {
		return "Fix the key of " + site + ", or override it with ratelimit.policies.<name>.key.";
	}

	private static <T> T parse(String description, String action, Supplier<T> parse) {
		try {
			return parse.get();
		}
		catch (IllegalArgumentException ex) {
			throw new RateLimitConfigurationException(description + ex.getMessage(), action);
		}
	}

}
