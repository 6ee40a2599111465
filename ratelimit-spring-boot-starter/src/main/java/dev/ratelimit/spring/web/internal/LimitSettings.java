package dev.ratelimit.spring.web.internal;

import java.util.List;
import java.util.Map;

import dev.ratelimit.core.Algorithm;
import org.jspecify.annotations.Nullable;

/**
 * What the application's configuration says of its limits, mapped once from its properties: the defaults that
 * every declaration takes, the rules, and the overrides of declared policies.
 *
 * @param defaultAlgorithm the algorithm of the limits that name none
 * @param shadow whether limits that do not say are in shadow mode
 * @param ipv6Prefix the leading bits of an IPv6 client address that identify a client, as configured
 * @param exempt the client networks exempt from every limit, as written
 * @param exemptIf the condition that exempts a request from every limit, or null
 * @param rules the {@code ratelimit.rules}, in order
 * @param overrides the values that replace those of declared policies, by the canonical name of the policy
 */
public record LimitSettings(Algorithm defaultAlgorithm, boolean shadow, int ipv6Prefix, List<String> exempt,
		@Nullable String exemptIf, List<Rule> rules, Map<String, PolicyOverride> overrides) {

	/**
	 * Returns the override of the policy of that name, or null if none: names match in their
	 * {@linkplain PolicyNames#canonical(String) canonical form}.
	 * @param policy the policy's name
	 * @return its override, or null
	 */
	public @Nullable PolicyOverride override(String policy) {
		return this.overrides.get(PolicyNames.canonical(policy));
	}

	/**
	 * One entry of {@code ratelimit.rules}: a limit on the requests whose path matches a pattern.
	 *
	 * @param path the path pattern, as written
	 * @param methods the HTTP methods, none for every method
	 * @param name the policy's name, or null for {@code rule-<index>}
	 * @param beforeSecurity whether the rule is decided before Spring Security
	 * @param values the values of its limit
	 */
	public record Rule(@Nullable String path, List<String> methods, @Nullable String name, boolean beforeSecurity,
			LimitValues values) {
	}

}
