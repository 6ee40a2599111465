package dev.ratelimit.spring.web.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.springframework.http.server.PathContainer;

/**
 * Finds the rules decided after Spring Security that are aimed at a path that Spring Security's own filters
 * answer, such as {@code /login}: such a rule is listed as active and never applies, since the web stack decides
 * it only once every filter has let the request through.
 */
final class SecurityAnsweredRules {

	/** A path that no application serves: a rule matching it is a catch-all, which these paths only escape. */
	private static final PathContainer ANY_OTHER_PATH = PathContainer.parsePath("/ratelimit-probe/any/other/path");

	private SecurityAnsweredRules() {
	}

	/**
	 * Returns one warning per rule aimed at a path that Spring Security answers itself.
	 * @param stack the web stack that decides the rules
	 * @param rules the rules decided after Spring Security
	 * @return the warnings, in the order of the rules
	 */
	static List<String> warnings(WebStack stack, List<PathRule> rules) {
		Map<String, String> answered = stack.securityAnsweredPaths();
		List<String> warnings = new ArrayList<>();
		for (PathRule rule : rules) {
			if (rule.pattern().matches(ANY_OTHER_PATH)) {
				continue;
			}
			answered.forEach((path, filter) -> {
				if (rule.pattern().matches(PathContainer.parsePath(path))) {
					warnings.add(rule.property() + " (" + rule.pattern() + ") never applies to " + path
							+ ": Spring Security's " + filter + " answers it before " + stack.name()
							+ ", where this rule is decided. Set " + rule.property() + ".before-security=true to "
							+ "decide it before Spring Security's filter chain.");
				}
			});
		}
		return warnings;
	}

}
