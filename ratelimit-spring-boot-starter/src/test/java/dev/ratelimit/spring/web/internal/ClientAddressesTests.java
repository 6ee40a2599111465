package dev.ratelimit.spring.web.internal;

import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests that the client address is the socket peer unless the peer is a trusted proxy, and then the right-most
 * untrusted hop of the forwarding headers, and that nothing a client writes in them chooses its address.
 */
class ClientAddressesTests {

	private final ClientAddresses addresses = new ClientAddresses(
			Networks.parse("ratelimit.client-address.trusted-proxies",
					List.of("10.0.0.0/8", "2001:db8:ffff::/48", "192.0.2.1")));

	/**
	 * Each row: the socket peer, the X-Forwarded-For lines (split at {@code |}), the Forwarded lines (split at
	 * {@code |}), and the client address.
	 */
	@ParameterizedTest(name = "[{index}] peer {0}, X-Forwarded-For {1}, Forwarded {2}: {3}")
	@CsvSource(delimiter = ';', nullValues = "-", value = {
			// an untrusted peer is the client, whatever it writes
			"203.0.113.9; 198.51.100.1; -; 203.0.113.9",
			"203.0.113.9; -; for=198.51.100.1; 203.0.113.9",
			"2001:db8:1::1; 198.51.100.1; -; 2001:db8:1::1",
			// a trusted peer without headers is the client
			"10.0.0.1; -; -; 10.0.0.1",
			// one proxy
			"10.0.0.1; 198.51.100.1; -; 198.51.100.1",
			"10.0.0.1; ' 198.51.100.1 '; -; 198.51.100.1",
			"192.0.2.1; 2001:db8:1::7; -; 2001:db8:1::7",
			"2001:db8:ffff::5; 198.51.100.1; -; 198.51.100.1",
			// a spoofed hop left of the one the proxy appended is ignored
			"10.0.0.1; '6.6.6.6, 198.51.100.1'; -; 198.51.100.1",
			"10.0.0.1; 6.6.6.6|198.51.100.1; -; 198.51.100.1",
			// several proxies, all trusted, are skipped from the right
			"10.0.0.1; '6.6.6.6, 198.51.100.1, 10.0.0.3, 10.0.0.2'; -; 198.51.100.1",
			"10.0.0.1; '198.51.100.1, 2001:db8:ffff::1, 192.0.2.1'; -; 198.51.100.1",
			// a client spoofing a trusted address right of its own is still itself
			"10.0.0.1; '10.0.0.9, 198.51.100.1'; -; 198.51.100.1",
			// all hops trusted: the left-most is the client
			"10.0.0.1; '10.0.0.3, 10.0.0.2'; -; 10.0.0.3",
			// ports and brackets
			"10.0.0.1; 198.51.100.1:4711; -; 198.51.100.1",
			"10.0.0.1; [2001:db8:1::7]:4711; -; 2001:db8:1::7",
			"10.0.0.1; [2001:db8:1::7]; -; 2001:db8:1::7",
			"10.0.0.1; ::ffff:198.51.100.1; -; 198.51.100.1",
			// malformed hops stop the walk at the last trusted hop
			"10.0.0.1; 'garbage, 198.51.100.1'; -; 198.51.100.1",
			"10.0.0.1; '198.51.100.1, garbage'; -; 10.0.0.1",
			"10.0.0.1; '198.51.100.1, unknown, 10.0.0.2'; -; 10.0.0.2",
			"10.0.0.1; '198.51.100.1,,10.0.0.2'; -; 10.0.0.2",
			"10.0.0.1; '198.51.100.1,'; -; 10.0.0.1",
			"10.0.0.1; ''; -; 10.0.0.1",
			"10.0.0.1; localhost; -; 10.0.0.1",
			"10.0.0.1; 198.51.100.1:99999999; -; 10.0.0.1",
			"10.0.0.1; 198.51.100.1:; -; 10.0.0.1",
			"10.0.0.1; [2001:db8:1::7; -; 10.0.0.1",
			"10.0.0.1; [198.51.100.1]x; -; 10.0.0.1",
			"10.0.0.1; 198.51.100.1/8; -; 10.0.0.1",
			"10.0.0.1; 2001:db8:1::7%eth0; -; 10.0.0.1",
			// Forwarded
			"10.0.0.1; -; for=198.51.100.1; 198.51.100.1",
			"10.0.0.1; -; 'For=198.51.100.1;proto=https;by=10.0.0.1'; 198.51.100.1",
			"10.0.0.1; -; 'for=\"198.51.100.1:4711\"'; 198.51.100.1",
			"10.0.0.1; -; 'for=\"[2001:db8:1::7]\"'; 2001:db8:1::7",
			"10.0.0.1; -; 'for=\"[2001:db8:1::7]:4711\"'; 2001:db8:1::7",
			"10.0.0.1; -; 'for=\"[2001:db8:1::7]:_port\"'; 2001:db8:1::7",
			"10.0.0.1; -; 'for=6.6.6.6, for=198.51.100.1'; 198.51.100.1",
			"10.0.0.1; -; 'for=6.6.6.6|for=198.51.100.1;proto=http'; 198.51.100.1",
			"10.0.0.1; -; 'for=198.51.100.1, for=10.0.0.2'; 198.51.100.1",
			"10.0.0.1; -; 'for=198.51.100.1 ; proto=http , for=10.0.0.2'; 198.51.100.1",
			"10.0.0.1; -; 'for=\"a,b\", for=198.51.100.1'; 198.51.100.1",
			"10.0.0.1; -; 'for=\"\\\"quoted\\\"\", for=198.51.100.1'; 198.51.100.1",
			// Forwarded hops that name no address stop the walk
			"10.0.0.1; -; 'for=198.51.100.1, for=unknown'; 10.0.0.1",
			"10.0.0.1; -; 'for=198.51.100.1, for=_hidden, for=10.0.0.2'; 10.0.0.2",
			"10.0.0.1; -; 'for=198.51.100.1, proto=https'; 10.0.0.1",
			"10.0.0.1; -; 'for=198.51.100.1;for=6.6.6.6'; 10.0.0.1",
			"10.0.0.1; -; 'for=198.51.100.1, for=\"\"'; 10.0.0.1",
			// a Forwarded header that does not parse is not read
			"10.0.0.1; -; 'for=6.6.6.6, for=\"198.51.100.1'; 10.0.0.1",
			"10.0.0.1; -; 'for, for=198.51.100.1'; 10.0.0.1",
			"10.0.0.1; -; 'for=198.51.100.1 x'; 10.0.0.1",
			"10.0.0.1; -; 'for=198.51.100.1|garbage\"'; 10.0.0.1",
			"10.0.0.1; -; '=198.51.100.1'; 10.0.0.1",
			// both headers: they must agree, else one was written by the client
			"10.0.0.1; 198.51.100.1; for=198.51.100.1; 198.51.100.1",
			"10.0.0.1; 198.51.100.1; for=6.6.6.6; 10.0.0.1",
			"10.0.0.1; 6.6.6.6; for=198.51.100.1; 10.0.0.1" })
	void resolvesTheClientAddress(String peer, String forwardedFor, String forwarded, String client) {
		assertThat(this.addresses.resolve(IpAddress.parse(peer), lines(forwarded), lines(forwardedFor)))
			.hasToString(client);
	}

	@Test
	void readsAtMostTwentyHops() {
		String trusted = ", 10.0.0.2".repeat(ClientAddresses.MAX_HOPS);
		assertThat(this.addresses.resolve(IpAddress.parse("10.0.0.1"), List.of(), List.of("198.51.100.1" + trusted)))
			.hasToString("10.0.0.2");
		String fewer = ", 10.0.0.2".repeat(ClientAddresses.MAX_HOPS - 1);
		assertThat(this.addresses.resolve(IpAddress.parse("10.0.0.1"), List.of(), List.of("198.51.100.1" + fewer)))
			.hasToString("198.51.100.1");
	}

	@Test
	void trustsNoOneWithoutTrustedProxies() {
		ClientAddresses untrusting = new ClientAddresses(Networks.NONE);
		assertThat(untrusting.resolve(IpAddress.parse("127.0.0.1"), List.of("for=198.51.100.1"),
				List.of("198.51.100.1"))).hasToString("127.0.0.1");
	}

	@ParameterizedTest
	@CsvSource({ "2001:db8:1:2:3:4:5:6, 64, 2001:db8:1:2::/64", "2001:db8:1:2:3:4:5:6, 56, 2001:db8:1::/56",
			"2001:db8:1:2ff:3:4:5:6, 56, 2001:db8:1:200::/56", "2001:db8:1:2:3:4:5:6, 128, 2001:db8:1:2:3:4:5:6",
			"2001:db8:1:2:3:4:5:6, 1, ::/1", "::ffff:192.0.2.7, 64, 192.0.2.7", "192.0.2.7, 1, 192.0.2.7",
			"[fe80::1%eth0], 64, fe80::/64", "not-an-address, 64, not-an-address" })
	void keysAnIpv6ClientByItsNetwork(String remoteAddress, int prefix, String text) {
		assertThat(new ClientAddresses(Networks.NONE).keyText(OriginRequest.from(remoteAddress), prefix))
			.isEqualTo(text);
	}

	@ParameterizedTest
	@CsvSource({ "64:ff9b::192.0.2.33, 192.0.2.33", "64:ff9b::c000:221, 192.0.2.33",
			"64:ff9b::c000:222, 192.0.2.34", "64:ff9b:1:c000:2:2100::, 192.0.2.33",
			"64:ff9b:1:c000:2:2200:0:9, 192.0.2.34",
			// outside both prefixes, or with the octet RFC 6052 reserves set: an IPv6 client like any other
			"64:ff9b:0:1::c000:221, 64:ff9b:0:1::/64", "64:ff9b:1:c000:102:2100::, 64:ff9b:1:c000::/64",
			"64:ff9b:2:c000:2:21::, 64:ff9b:2:c000::/64", "65:ff9b::c000:221, 65:ff9b::/64" })
	void keysAClientBehindANat64TranslatorByTheIpv4AddressItEmbeds(String remoteAddress, String text) {
		assertThat(new ClientAddresses(Networks.NONE).keyText(OriginRequest.from(remoteAddress), 64)).isEqualTo(text);
	}

	private static List<String> lines(String lines) {
		return (lines != null) ? Arrays.asList(lines.split("\\|", -1)) : List.of();
	}

}
