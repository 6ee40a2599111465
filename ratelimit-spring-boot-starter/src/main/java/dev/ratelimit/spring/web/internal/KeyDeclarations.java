package dev.ratelimit.spring.web.internal;

import java.util.List;

import dev.ratelimit.spring.RateLimitConfigurationException;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;

/**
 * Turns the key of a declaration, as written ({@code ip}, {@code user}, {@code global}, {@code header:<name>},
 * {@code bean:<name>}, {@code spel:<expression>} or an expression that starts with {@code #}), into the
 * {@link KeySource} that computes it per request.
 */
final class KeyDeclarations {

	private static final String SPEL = "spel:";

	private final BeanFactory beanFactory;

	private final ResolverTypes resolvers;

	KeyDeclarations(BeanFactory beanFactory, ResolverTypes resolvers) {
		this.beanFactory = beanFactory;
		this.resolvers = resolvers;
	}

	/** The key as declared, {@code ip} where none is. */
	static String normalize(@Nullable String key) {
		String trimmed = (key != null) ? key.trim() : "";
		return trimmed.isEmpty() ? "ip" : trimmed;
	}

	/** Whether a key as declared is an expression: {@code spel:<expression>}, or one that starts with {@code #}. */
	static boolean isExpression(String spec) {
		return spec.startsWith(SPEL) || spec.startsWith("#");
	}

	/** What fixes a key of the declaration at {@code site}. */
	static String action(String site) {
		return "Fix the key of " + site + ", or override it with ratelimit.policies.<name>.key.";
	}

	/**
	 * Returns the source of a key as declared at {@code site}; a resolver bean it names is added to
	 * {@code consulted}.
	 */
	KeySource source(String spec, String site, String action, List<ParameterBinding> bindings, AddressKey address,
			List<Object> consulted) {
		if (spec.equals("ip")) {
			return KeySource.clientAddress(address);
		}
		if (spec.equals(KeySource.USER)) {
			return KeySource.user(address);
		}
		if (spec.equals(CodeDeclarations.KEY) && site.equals(CodeDeclarations.SITE)) {
			return KeySource.code();
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
		String expression = spec.startsWith(SPEL) ? spec.substring(SPEL.length()) : spec;
		if (isExpression(spec) && !expression.isBlank()) {
			return KeySource.expression(DeclaredValues.spel("Invalid key of " + site + ": ", expression, action),
					bindings, address);
		}
		throw new RateLimitConfigurationException("Invalid key of " + site + ": '" + spec + "' is not a key; use ip, "
				+ "user, global, header:<name>, bean:<name>, spel:<expression> or #<expression>.", action);
	}

}
