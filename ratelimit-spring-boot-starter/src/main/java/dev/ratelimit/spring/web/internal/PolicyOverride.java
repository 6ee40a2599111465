package dev.ratelimit.spring.web.internal;

import java.util.List;
import java.util.Set;

/**
 * The values that {@code ratelimit.policies.<name>} sets for one policy, replacing those of its declaration.
 *
 * @param name the policy's name as first written in the configuration
 * @param values the values set, the others null
 * @param origins where the values come from
 * @param fields the names of the fields set, as the components of {@link LimitValues}
 */
public record PolicyOverride(String name, LimitValues values, List<String> origins, Set<String> fields) {

	/** The prefix of every policy's properties. */
	static final String PROPERTY = "ratelimit.policies.";


	/** Whether the override sets nothing but {@code shadow}, which a rule's policy may take. */
	boolean shadowOnly() {
		return this.fields.equals(Set.of("shadow"));
	}

	/** The property under which the override is set. */
	String property() {
		return PROPERTY + this.name;
	}

	/** Where the override comes from, as messages write it. */
	String origin() {
		return this.origins.isEmpty() ? "unknown origin" : String.join(", ", this.origins);
	}

}
