package dev.ratelimit.spring.web.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

import dev.ratelimit.spring.RateLimitConfigurationException;
import org.jspecify.annotations.Nullable;

/**
 * A set of IPv4 and IPv6 networks, each written in CIDR notation ({@code 10.0.0.0/8}, {@code 2001:db8::/32}) or
 * as one address ({@code 192.0.2.1}, a {@code /32}; {@code ::1}, a {@code /128}). An IPv4-mapped IPv6 network
 * ({@code ::ffff:10.0.0.0/104}) is the IPv4 network it maps, as {@link IpAddress} reads mapped addresses as IPv4,
 * and an IPv4 network never contains an IPv6 address nor the other way round. It is the one matcher of client
 * networks, for trusted proxies and exemptions alike.
 */
public final class Networks {

	/** Matches no address. */
	static final Networks NONE = new Networks(List.of());

	private static final Pattern PREFIX = Pattern.compile("\\d{1,3}");

	private final List<Network> networks;

	private Networks(List<Network> networks) {
		this.networks = networks;
	}

	/**
	 * Reads the networks of a property, failing the start with the property and the value at fault.
	 * @param property the property, such as {@code ratelimit.exempt}
	 * @param values the networks as written
	 */
	public static Networks parse(String property, List<String> values) {
		List<Network> networks = new ArrayList<>(values.size());
		for (int i = 0; i < values.size(); i++) {
			networks.add(network(property + "[" + i + "]", values.get(i)));
		}
		return networks.isEmpty() ? NONE : new Networks(List.copyOf(networks));
	}

	private static Network network(String property, String value) {
		String text = value.trim();
		int slash = text.indexOf('/');
		String literal = (slash >= 0) ? text.substring(0, slash) : text;
		IpAddress address = IpAddress.parse(literal);
		if (address == null) {
			throw invalid(property, value, "'" + literal + "' is not an IPv4 or IPv6 address (host names are "
					+ "never looked up)");
		}
		// a mapped IPv6 network reads as IPv4, so its prefix counts from the IPv4 part
		int offset = (literal.indexOf(':') >= 0 && !address.isIpv6()) ? 96 : 0;
		int prefix = address.bits();
		if (slash >= 0) {
			String written = text.substring(slash + 1);
			if (!PREFIX.matcher(written).matches() || Integer.parseInt(written) < offset
					|| Integer.parseInt(written) > offset + address.bits()) {
				throw invalid(property, value, "the prefix length must be a number from " + offset + " to "
						+ (offset + address.bits()) + ", was '" + written + "'");
			}
			prefix = Integer.parseInt(written) - offset;
		}
		IpAddress network = address.network(prefix);
		if (!network.equals(address)) {
			throw invalid(property, value, "it sets bits beyond its /" + (prefix + offset)
					+ " prefix, so it is not the network it seems to name; did you mean "
					+ ((offset > 0) ? "::ffff:" : "") + network + "/" + (prefix + offset) + "?");
		}
		return new Network(network, prefix);
	}

	private static RateLimitConfigurationException invalid(String property, String value, String reason) {
		return new RateLimitConfigurationException("Invalid " + property + ": '" + value + "' is not a network: "
				+ reason + ".", "Write an address, or a network in CIDR notation such as 10.0.0.0/8 or "
						+ "2001:db8::/32, in " + property + ".");
	}

	boolean isEmpty() {
		return this.networks.isEmpty();
	}

	/** Returns whether one of the networks contains {@code address}. */
	boolean contains(IpAddress address) {
		for (Network network : this.networks) {
			if (network.address().sharesPrefix(address, network.prefix())) {
				return true;
			}
		}
		return false;
	}

	/** Returns the networks joined with {@code other}'s. */
	Networks and(Networks other) {
		if (other.isEmpty()) {
			return this;
		}
		if (isEmpty()) {
			return other;
		}
		List<Network> joined = new ArrayList<>(this.networks);
		joined.addAll(other.networks);
		return new Networks(List.copyOf(joined));
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return (other instanceof Networks networks) && this.networks.equals(networks.networks);
	}

	@Override
	public int hashCode() {
		return this.networks.hashCode();
	}

	@Override
	public String toString() {
		return this.networks.toString();
	}

	private record Network(IpAddress address, int prefix) {

		@Override
		public String toString() {
			return this.address + "/" + this.prefix;
		}

	}

}
