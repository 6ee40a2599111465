package dev.ratelimit.spring.web.internal;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.ratelimit.spring.RateLimitConfigurationException;

/**
 * The names of the policies that the declarations claim, each once: a policy's name identifies its state, headers
 * and metrics. Names are also compared in their {@linkplain #canonical(String) canonical form}, as
 * {@code ratelimit.policies} matches them, and every override must name a claimed policy.
 */
public final class PolicyNames {

	/** The property of the rules, which the site of a rule's policy starts with. */
	static final String RULES = "ratelimit.rules";

	/** Where each policy name was declared, to reject a name declared twice. */
	private final Map<String, String> sites = new LinkedHashMap<>();

	/** The name of each canonical name, to reject two names that overrides could not tell apart. */
	private final Map<String, String> canonicalNames = new HashMap<>();

	/**
	 * Claims {@code name} for the declaration at {@code site}, which may claim it again.
	 * @throws RateLimitConfigurationException if another declaration claimed it, or a name of the same canonical
	 * form
	 */
	synchronized void claim(String name, String site, String action) {
		String previous = this.sites.putIfAbsent(name, site);
		if (previous != null && !previous.equals(site)) {
			throw new RateLimitConfigurationException("Policy name '" + name + "' is declared twice: by " + previous
					+ " and by " + site + ". Each policy's name identifies its state, headers and metrics.", action
							+ " Give each policy a distinct name.");
		}
		String alike = this.canonicalNames.putIfAbsent(canonical(name), name);
		if (alike != null && !alike.equals(name)) {
			throw new RateLimitConfigurationException("Policy names '" + alike + "' (" + this.sites.get(alike)
					+ ") and '" + name + "' (" + site + ") differ only in case or punctuation, which "
					+ "ratelimit.policies ignores: an override could not tell them apart.", action
							+ " Give each policy a name that differs in its letters or digits.");
		}
	}

	/** Returns whether a declaration claimed a name of this canonical form. */
	synchronized boolean claimed(String canonicalName) {
		return this.canonicalNames.containsKey(canonicalName);
	}

	/**
	 * Checks, once every declaration claimed its names, that each override names a declared policy; an override
	 * that sets only {@code shadow} may name a rule's policy too.
	 * @param overrides the overrides, by the canonical name of their policy
	 * @throws RateLimitConfigurationException naming the override and the closest declared policies
	 */
	synchronized void checkOverrides(Map<String, PolicyOverride> overrides) {
		List<String> overridable = new ArrayList<>();
		Set<String> known = new HashSet<>();
		Set<String> ruled = new HashSet<>();
		this.sites.forEach((name, site) -> {
			if (site.startsWith(RULES)) {
				ruled.add(canonical(name));
			}
			else {
				overridable.add(name);
				known.add(canonical(name));
			}
		});
		for (Map.Entry<String, PolicyOverride> entry : overrides.entrySet()) {
			PolicyOverride override = entry.getValue();
			boolean rule = ruled.contains(entry.getKey());
			if (known.contains(entry.getKey()) || (rule && override.shadowOnly())) {
				continue;
			}
			List<String> closest = overridable.stream()
				.sorted(Comparator.comparingInt((name) -> distance(entry.getKey(), canonical(name))))
				.limit(3)
				.toList();
			throw new RateLimitConfigurationException(override.property() + " (" + override.origin() + ") "
					+ (rule ? "names a policy of ratelimit.rules, which its rule sets itself (only its shadow "
							+ "may be set here)" : "overrides no @RateLimited policy")
					+ "; the closest declared policies: " + closest + ".",
					"Use the name of a @RateLimited policy (names match ignoring case and every character but "
							+ "letters and digits), or remove the override.");
		}
	}

	/**
	 * Returns the form in which policy and plan names are compared: only the letters and digits, in lower case.
	 * @param name a policy name
	 * @return its canonical form
	 */
	public static String canonical(String name) {
		StringBuilder canonical = new StringBuilder(name.length());
		name.codePoints()
			.filter(Character::isLetterOrDigit)
			.map(Character::toLowerCase)
			.forEach(canonical::appendCodePoint);
		return canonical.toString();
	}

	/**
	 * Returns the Levenshtein distance between two names, by which the closest of several names is suggested.
	 * @param a a name
	 * @param b another name
	 * @return the number of characters to insert, delete or replace to turn one into the other
	 */
	public static int distance(String a, String b) {
		int[] previous = new int[b.length() + 1];
		int[] current = new int[b.length() + 1];
		for (int j = 0; j <= b.length(); j++) {
			previous[j] = j;
		}
		for (int i = 1; i <= a.length(); i++) {
			current[0] = i;
			for (int j = 1; j <= b.length(); j++) {
				int substitution = previous[j - 1] + ((a.charAt(i - 1) == b.charAt(j - 1)) ? 0 : 1);
				current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
			}
			int[] swap = previous;
			previous = current;
			current = swap;
		}
		return previous[b.length()];
	}

}
