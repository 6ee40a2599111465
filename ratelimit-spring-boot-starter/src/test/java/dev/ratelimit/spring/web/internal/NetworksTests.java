package dev.ratelimit.spring.web.internal;

import java.util.List;

import dev.ratelimit.spring.RateLimitConfigurationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests of the one CIDR matcher, which trusted proxies and exemptions share.
 */
class NetworksTests {

	@ParameterizedTest(name = "{0} contains {1}: {2}")
	@CsvSource({
			// IPv4
			"10.0.0.0/8, 10.255.255.255, true", "10.0.0.0/8, 11.0.0.0, false", "10.0.0.0/8, 9.255.255.255, false",
			"192.0.2.128/25, 192.0.2.128, true", "192.0.2.128/25, 192.0.2.127, false",
			"192.0.2.1/32, 192.0.2.1, true", "192.0.2.1/32, 192.0.2.2, false", "192.0.2.1, 192.0.2.1, true",
			"192.0.2.1, 192.0.2.0, false", "0.0.0.0/0, 203.0.113.9, true", "0.0.0.0/0, 2001:db8::1, false",
			// IPv6
			"2001:db8::/32, 2001:db8:ffff::1, true", "2001:db8::/32, 2001:db9::1, false",
			"2001:db8:1:2::/64, 2001:db8:1:2:ffff:ffff:ffff:ffff, true", "2001:db8:1:2::/64, 2001:db8:1:3::, false",
			"2001:db8::1/128, 2001:db8::1, true", "2001:db8::1/128, 2001:db8::2, false", "::1, ::1, true",
			"::/0, 2001:db8::1, true", "::/0, 10.0.0.1, false", "2001:db8::/33, 2001:db8:8000::, false",
			"2001:db8::/33, 2001:db8:7fff::, true",
			// IPv4-mapped IPv6 is IPv4, on either side
			"::ffff:10.0.0.0/104, 10.1.2.3, true", "::ffff:10.0.0.0/104, 11.1.2.3, false",
			"10.0.0.0/8, ::ffff:10.1.2.3, true", "::ffff:0:0/96, 198.51.100.1, true" })
	void matchesTheAddressesOfItsNetworks(String network, String address, boolean contained) {
		IpAddress client = IpAddress.parse(address);
		assertThat(Networks.parse("ratelimit.exempt", List.of(network)).contains(client)).isEqualTo(contained);
	}

	@Test
	void matchesAnyOfSeveralNetworks() {
		Networks networks = Networks.parse("ratelimit.exempt", List.of("10.0.0.0/8", " 2001:db8::/32 "));
		assertThat(networks.contains(IpAddress.parse("10.9.9.9"))).isTrue();
		assertThat(networks.contains(IpAddress.parse("2001:db8::9"))).isTrue();
		assertThat(networks.contains(IpAddress.parse("192.0.2.1"))).isFalse();
		assertThat(Networks.NONE.contains(IpAddress.parse("192.0.2.1"))).isFalse();
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', quoteCharacter = '"', value = {
			"10.0.0.0/33 | the prefix length must be a number from 0 to 32, was '33'",
			"2001:db8::/129 | the prefix length must be a number from 0 to 128, was '129'",
			"10.0.0.0/-1 | was '-1'", "10.0.0.0/ | was ''", "10.0.0.0/8/8 | was '8/8'", "10.0.0.0/x | was 'x'",
			"::ffff:10.0.0.0/95 | the prefix length must be a number from 96 to 128, was '95'",
			"10.0.0.1/8 | it sets bits beyond its /8 prefix, so it is not the network it seems to name; did you mean 10.0.0.0/8?",
			"2001:db8::1/32 | did you mean 2001:db8::/32?", "::ffff:10.0.0.1/104 | did you mean ::ffff:10.0.0.0/104?",
			"localhost | 'localhost' is not an IPv4 or IPv6 address (host names are never looked up)",
			"10.0.0 | '10.0.0' is not an IPv4 or IPv6 address", "\"\" | '' is not an IPv4 or IPv6 address",
			"fe80::1%eth0/64 | is not an IPv4 or IPv6 address", "[::1]/128 | is not an IPv4 or IPv6 address" })
	void rejectsWhatIsNotANetworkNamingThePropertyAndValue(String value, String reason) {
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> Networks.parse("ratelimit.exempt", List.of("10.0.0.0/8", value)))
			.withMessageStartingWith("Invalid ratelimit.exempt[1]: '" + value + "' is not a network: ")
			.withMessageContaining(reason);
	}

}
