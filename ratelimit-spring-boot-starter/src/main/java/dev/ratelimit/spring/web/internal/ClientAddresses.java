package dev.ratelimit.spring.web.internal;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Finds the address of the client that sent a request: the socket peer, unless the peer is one of the trusted
 * proxies; then the right-most address of the {@code Forwarded} or {@code X-Forwarded-For} header that is not a
 * trusted proxy, as each proxy appends the address it received the request from and everything further left
 * may be written by the client.
 * <p>
 * Nothing a client writes chooses its address: a hop that is no address (garbage, {@code unknown}, an
 * obfuscated identifier, a {@code Forwarded} element without {@code for=}) stops the walk at the last trusted
 * hop, whose address is the client's; so does the {@value #MAX_HOPS}th trusted hop; a {@code Forwarded} header
 * that does not parse is not read at all; and when both headers are present and name different clients, one
 * of them was written by the client, so the socket peer is the client. Header lines repeated are one list, in
 * order, as HTTP reads them.
 * <p>
 * The socket peer and the headers are read as the connection delivered them, whatever a servlet container's
 * valve (Tomcat's {@code RemoteIpValve}, {@code server.forward-headers-strategy=native}) or a request wrapper
 * (Spring's {@code ForwardedHeaderFilter}, {@code framework}) made of them: each web stack tells the
 * {@link LimitedRequest#origin() origin} of its requests.
 */
public final class ClientAddresses {

	/** At most this many hops are read, from the right. */
	static final int MAX_HOPS = 20;

	private final Networks trustedProxies;

	public ClientAddresses(Networks trustedProxies) {
		this.trustedProxies = trustedProxies;
	}

	/**
	 * Returns the text of the client's address in a key: its {@link IpAddress#toString() one spelling}, an
	 * IPv6 address as its network of {@code ipv6Prefix} bits ({@code 2001:db8:1:2::/64}) unless that is all 128,
	 * an address of a NAT64 translator as the IPv4 address it embeds ({@link IpAddress#host()}); a socket address
	 * that is no address literal as it is.
	 */
	String keyText(LimitedRequest request, int ipv6Prefix) {
		Resolved resolved = resolved(request);
		IpAddress resolvedAddress = resolved.address();
		if (resolvedAddress == null) {
			return resolved.text();
		}
		IpAddress address = resolvedAddress.host();
		if (!address.isIpv6() || ipv6Prefix >= 128) {
			return address.toString();
		}
		return address.network(ipv6Prefix) + "/" + ipv6Prefix;
	}

	/** Returns the client's address, or null if the socket address is no address literal. */
	@Nullable IpAddress address(LimitedRequest request) {
		return resolved(request).address();
	}

	private Resolved resolved(LimitedRequest request) {
		Origin origin = request.origin();
		IpAddress peer = IpAddress.parseRemote(origin.socketAddress());
		return new Resolved((peer != null) ? resolve(peer, origin.forwarded(), origin.forwardedFor()) : null,
				origin.socketAddress());
	}

	/**
	 * Returns the client's address, given the socket peer and the lines of the {@code Forwarded} and
	 * {@code X-Forwarded-For} headers.
	 */
	IpAddress resolve(IpAddress peer, List<String> forwarded, List<String> forwardedFor) {
		if (!this.trustedProxies.contains(peer) || (forwarded.isEmpty() && forwardedFor.isEmpty())) {
			return peer;
		}
		IpAddress viaForwarded = forwarded.isEmpty() ? null : walk(peer, ForwardedHeader.hops(forwarded));
		IpAddress viaForwardedFor = forwardedFor.isEmpty() ? null : walk(peer, forwardedForHops(forwardedFor));
		if (viaForwarded != null && viaForwardedFor != null) {
			return viaForwarded.equals(viaForwardedFor) ? viaForwarded : peer;
		}
		return (viaForwarded != null) ? viaForwarded : viaForwardedFor;
	}

	/** Walks hops from the right; a null hop is one that names no address. */
	private IpAddress walk(IpAddress peer, List<@Nullable IpAddress> hops) {
		IpAddress last = peer;
		for (int i = hops.size() - 1, read = 0; i >= 0 && read < MAX_HOPS; i--, read++) {
			IpAddress hop = hops.get(i);
			if (hop == null) {
				return last;
			}
			if (!this.trustedProxies.contains(hop)) {
				return hop;
			}
			last = hop;
		}
		return last;
	}

	private static List<@Nullable IpAddress> forwardedForHops(List<String> lines) {
		List<@Nullable IpAddress> hops = new ArrayList<>();
		for (String line : lines) {
			for (String hop : line.split(",", -1)) {
				hops.add(node(hop.trim()));
			}
		}
		return hops;
	}

	/**
	 * Returns the address of a node as proxies write it: an IPv4 address, an IPv6 address bare or bracketed,
	 * either with a port ({@code 192.0.2.1:4711}, {@code [2001:db8::1]:4711}); null for anything else.
	 */
	static @Nullable IpAddress node(String text) {
		if (text.startsWith("[")) {
			int close = text.indexOf(']');
			if (close < 0 || (close < text.length() - 1 && !isPort(text.substring(close + 1)))) {
				return null;
			}
			return IpAddress.parse(text.substring(1, close));
		}
		int colon = text.indexOf(':');
		if (colon >= 0 && text.indexOf(':', colon + 1) < 0) {
			return isPort(text.substring(colon)) ? IpAddress.parse(text.substring(0, colon)) : null;
		}
		return IpAddress.parse(text);
	}

	/** Returns whether {@code text} is a colon and a port: digits, or an obfuscated port of RFC 7239. */
	private static boolean isPort(String text) {
		if (text.length() < 2 || text.length() > 64 || text.charAt(0) != ':') {
			return false;
		}
		boolean obfuscated = text.charAt(1) == '_';
		if (!obfuscated && text.length() > 6) {
			return false;
		}
		for (int i = (obfuscated ? 2 : 1); i < text.length(); i++) {
			char c = text.charAt(i);
			boolean digit = c >= '0' && c <= '9';
			if (!digit && !(obfuscated && (Character.isLetter(c) && c < 128 || c == '.' || c == '_' || c == '-'))) {
				return false;
			}
		}
		return true;
	}

	private record Resolved(@Nullable IpAddress address, String text) {
	}

	/**
	 * What the connection delivered: the socket peer's address and the forwarding headers' lines.
	 * @param socketAddress the socket peer's address, as the container writes it
	 * @param forwarded the lines of {@code Forwarded}, in order
	 * @param forwardedFor the lines of {@code X-Forwarded-For}, in order
	 */
	public record Origin(String socketAddress, List<String> forwarded, List<String> forwardedFor) {

		/** The name of the standard forwarding header, RFC 7239. */
		public static final String FORWARDED = "Forwarded";

		/** The name of the de facto forwarding header. */
		public static final String X_FORWARDED_FOR = "X-Forwarded-For";

	}

}
