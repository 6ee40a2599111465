package dev.ratelimit.spring.web.internal;


/**
 * The client address as one endpoint keys it: resolved past the trusted proxies, an IPv6 address cut to its
 * network of {@code ipv6Prefix} bits.
 *
 * @param addresses resolves the client address
 * @param ipv6Prefix how many leading bits of an IPv6 address identify a client, from 1 to 128
 */
record AddressKey(ClientAddresses addresses, int ipv6Prefix) {

	/** Returns the address as it appears in keys, such as {@code 192.0.2.1} or {@code 2001:db8:1:2::/64}. */
	String text(LimitedRequest request) {
		return this.addresses.keyText(request, this.ipv6Prefix);
	}

	/** Returns the {@code ip:} key of the request. */
	String key(LimitedRequest request) {
		return "ip:" + text(request);
	}

}
