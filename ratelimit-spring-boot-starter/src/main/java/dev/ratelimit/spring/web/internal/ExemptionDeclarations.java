package dev.ratelimit.spring.web.internal;

import java.util.ArrayList;
import java.util.List;

import dev.ratelimit.spring.RateLimitConfigurationException;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;

/**
 * Who the client of a limit is and when a request is exempt from it: the IPv6 prefix that identifies a client,
 * the exempt networks and the exempting conditions ({@code spel:} or {@code bean:}) of {@code ratelimit.exempt},
 * {@code ratelimit.exempt-if} and of each policy, which the limits decided together for one client share.
 */
final class ExemptionDeclarations {

	private final BeanFactory beanFactory;

	private final ResolverTypes resolvers;

	private final ClientAddresses addresses;

	private final int ipv6Prefix;

	private final Networks exempt;

	private final @Nullable String exemptIf;

	ExemptionDeclarations(LimitSettings settings, BeanFactory beanFactory, ResolverTypes resolvers,
			ClientAddresses addresses) {
		this.beanFactory = beanFactory;
		this.resolvers = resolvers;
		this.addresses = addresses;
		this.ipv6Prefix = ipv6Prefix("ratelimit.client-address.ipv6-prefix", settings.ipv6Prefix());
		this.exempt = Networks.parse("ratelimit.exempt", settings.exempt());
		this.exemptIf = DeclaredValues.blankToNull(settings.exemptIf());
		if (this.exemptIf != null) {
			condition(Exemption.none(addresses), "ratelimit.exempt-if", this.exemptIf,
					new AddressKey(addresses, this.ipv6Prefix), new ArrayList<>());
		}
	}

	/**
	 * Returns the client terms of a policy: the values set under {@code property} where they are set, else the
	 * defaults of {@code ratelimit.client-address}.
	 */
	ClientTerms terms(String property, @Nullable LimitValues values) {
		if (values == null) {
			return new ClientTerms(this.ipv6Prefix, Networks.NONE, null);
		}
		int prefix = (values.ipv6Prefix() != null) ? ipv6Prefix(property + ".ipv6-prefix", values.ipv6Prefix())
				: this.ipv6Prefix;
		return new ClientTerms(prefix, Networks.parse(property + ".exempt", values.exempt()),
				DeclaredValues.blankToNull(values.exemptIf()));
	}

	/** Returns the client address as limits of these terms key it. */
	AddressKey address(ClientTerms terms) {
		return new AddressKey(this.addresses, terms.ipv6Prefix());
	}

	/**
	 * Returns when a request is exempt from limits of these terms, declared under {@code property}: in an exempt
	 * network of the application or of the terms, or meeting a condition of either; the beans it consults are
	 * added to {@code consulted}.
	 */
	Exemption exemption(ClientTerms terms, String property, AddressKey address, List<Object> consulted) {
		Exemption exemption = Exemption.none(this.addresses).orIn(this.exempt).orIn(terms.exempt());
		if (this.exemptIf != null) {
			exemption = condition(exemption, "ratelimit.exempt-if", this.exemptIf, address, consulted);
		}
		if (terms.exemptIf() != null) {
			exemption = condition(exemption, property + ".exempt-if", terms.exemptIf(), address, consulted);
		}
		return exemption;
	}

	private Exemption condition(Exemption exemption, String property, String spec, AddressKey address,
			List<Object> consulted) {
		String action = "Update " + property + " in your application's configuration.";
		if (spec.startsWith("spel:") && spec.length() > "spel:".length()) {
			return exemption.orIf(spec,
					DeclaredValues.spel("Invalid " + property + ": ", spec.substring("spel:".length()), action),
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

	private static int ipv6Prefix(String property, int prefix) {
		if (prefix < 1 || prefix > 128) {
			throw new RateLimitConfigurationException("Invalid " + property + ": " + prefix
					+ " is not a number of bits of an IPv6 address, from 1 to 128.",
					"Update " + property + " in your application's configuration; 64 keys every /64 network as one client.");
		}
		return prefix;
	}

	/**
	 * What says who the client of a limit is and whether it is exempt, which limits decided together share.
	 * @param ipv6Prefix the leading bits of an IPv6 client address that identify the client
	 * @param exempt the exempt networks of the policy itself
	 * @param exemptIf the exempting condition of the policy itself, or null
	 */
	record ClientTerms(int ipv6Prefix, Networks exempt, @Nullable String exemptIf) {

		@Override
		public String toString() {
			return "ipv6-prefix " + this.ipv6Prefix + ", exempt " + this.exempt + ", exempt-if "
					+ ((this.exemptIf != null) ? "'" + this.exemptIf + "'" : "none");
		}

	}

}
