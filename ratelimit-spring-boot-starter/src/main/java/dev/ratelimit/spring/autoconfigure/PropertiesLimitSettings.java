package dev.ratelimit.spring.autoconfigure;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimit.spring.web.internal.LimitSettings;
import dev.ratelimit.spring.web.internal.LimitValues;
import dev.ratelimit.spring.web.internal.PolicyOverride;

/**
 * Maps {@link RateLimitProperties} and the bound {@code ratelimit.policies} overrides into the plain
 * {@link LimitSettings} that the request path reads, in this one place: nothing past the auto-configuration
 * sees a properties class. The values are copied as written; the declarations check them, naming the property.
 */
final class PropertiesLimitSettings {

	private PropertiesLimitSettings() {
	}

	static LimitSettings of(RateLimitProperties properties, Map<String, PolicyOverride> overrides) {
		return new LimitSettings(properties.getDefaultAlgorithm(), properties.isShadow(),
				properties.getClientAddress().getIpv6Prefix(), copy(properties.getExempt()),
				properties.getExemptIf(), properties.getRules().stream().map(PropertiesLimitSettings::rule).toList(),
				Collections.unmodifiableMap(new LinkedHashMap<>(overrides)));
	}

	/** A copy that keeps what binding may leave in a list, nulls included, for the checks to name. */
	private static <T> List<T> copy(List<T> values) {
		return Collections.unmodifiableList(new ArrayList<>(values));
	}

	private static LimitSettings.Rule rule(RateLimitProperties.Rule rule) {
		return new LimitSettings.Rule(rule.getPath(), copy(rule.getMethods()), rule.getName(),
				rule.isBeforeSecurity(), values(rule));
	}

	/** The values of a limit, as set under a rule or a policy's override. */
	static LimitValues values(RateLimitProperties.Policy policy) {
		Map<String, LimitValues.PlanValues> plans = new LinkedHashMap<>();
		policy.getPlans()
			.forEach((name, plan) -> plans.put(name,
					new LimitValues.PlanValues(plan.getLimit(), plan.getWindow(), plan.getBurst())));
		return new LimitValues(policy.getLimit(), policy.getWindow(), policy.getAlgorithm(), policy.getBurst(),
				policy.getDelayAfter(), policy.getNoDelay(), policy.getCost(), policy.getCostExpression(),
				Collections.unmodifiableMap(plans), policy.getKey(), policy.getIpv6Prefix(),
				copy(policy.getExempt()), policy.getExemptIf(), copy(policy.getCountStatus()),
				policy.getShadow(), policy.getPenalty(), policy.getConcurrency());
	}

}
