package dev.ratelimit.spring.web.internal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests of reading and writing addresses, which never looks a name up.
 */
class IpAddressTests {

	@ParameterizedTest
	@CsvSource({ "2001:0DB8:0000:0000:0000:0000:0000:0001, 2001:db8::1", "0:0:0:0:0:0:0:1, ::1",
			"0:0:0:0:0:0:0:0, ::", "2001:db8:0:1:1:1:1:1, 2001:db8:0:1:1:1:1:1",
			"2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1", "2001:0:0:1:0:0:0:1, 2001:0:0:1::1",
			"64:ff9b::192.0.2.33, 64:ff9b::c000:221", "::ffff:192.0.2.1, 192.0.2.1",
			"0:0:0:0:0:FFFF:C000:0201, 192.0.2.1", "192.0.2.1, 192.0.2.1", "0.0.0.0, 0.0.0.0",
			"255.255.255.255, 255.255.255.255" })
	void writesEachAddressOneWay(String literal, String written) {
		assertThat(IpAddress.parse(literal)).hasToString(written);
	}

	@Test
	void readsARemoteAddressWithBracketsAndZone() {
		assertThat(IpAddress.parseRemote("[fe80::1%eth0]")).hasToString("fe80::1");
		assertThat(IpAddress.parseRemote("fe80::1%25")).hasToString("fe80::1");
		assertThat(IpAddress.parseRemote("127.0.0.1")).hasToString("127.0.0.1");
	}

	@ParameterizedTest
	@ValueSource(strings = { "1::2::3", "unknown", "1:2:3:4:5:6:7:8:9", "localhost", "", "256.0.0.1", "1.2.3",
			"01.2.3.4", "1.2.3.4.5", "12345::", "::g", "fe80::1%eth0", "[::1]", " 1.2.3.4", "1.2.3.4/8" })
	void readsNothingButALiteral(String text) {
		assertThat(IpAddress.parse(text)).isNull();
	}

	@Test
	void clearsTheBitsBeyondAPrefix() {
		assertThat(IpAddress.parse("2001:db8:1:2:3:4:5:6").network(64)).hasToString("2001:db8:1:2::");
		assertThat(IpAddress.parse("2001:db8:1:2ff:3:4:5:6").network(56)).hasToString("2001:db8:1:200::");
		assertThat(IpAddress.parse("2001:db8::1").network(128)).hasToString("2001:db8::1");
		assertThat(IpAddress.parse("192.0.2.255").network(25)).hasToString("192.0.2.128");
		assertThat(IpAddress.parse("192.0.2.255").network(0)).hasToString("0.0.0.0");
	}

}
