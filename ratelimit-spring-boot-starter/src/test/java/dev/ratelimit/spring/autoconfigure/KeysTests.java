package dev.ratelimit.spring.autoconfigure;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests of key normalization and hashing.
 */
class KeysTests {

	@Test
	void compressesIpv6ToItsCanonicalForm() {
		assertThat(Keys.normalizeAddress("2001:0DB8:0000:0000:0000:0000:0000:0001")).isEqualTo("2001:db8::1");
		assertThat(Keys.normalizeAddress("0:0:0:0:0:0:0:1")).isEqualTo("::1");
		assertThat(Keys.normalizeAddress("0:0:0:0:0:0:0:0")).isEqualTo("::");
		assertThat(Keys.normalizeAddress("2001:db8:0:1:1:1:1:1")).isEqualTo("2001:db8:0:1:1:1:1:1");
		assertThat(Keys.normalizeAddress("2001:db8:0:0:1:0:0:1")).isEqualTo("2001:db8::1:0:0:1");
		assertThat(Keys.normalizeAddress("2001:0:0:1:0:0:0:1")).isEqualTo("2001:0:0:1::1");
		assertThat(Keys.normalizeAddress("[fe80::1%eth0]")).isEqualTo("fe80::1");
		assertThat(Keys.normalizeAddress("64:ff9b::192.0.2.33")).isEqualTo("64:ff9b::c000:221");
	}

	@Test
	void unwrapsIpv4MappedAddresses() {
		assertThat(Keys.normalizeAddress("::ffff:192.0.2.1")).isEqualTo("192.0.2.1");
		assertThat(Keys.normalizeAddress("0:0:0:0:0:FFFF:C000:0201")).isEqualTo("192.0.2.1");
		assertThat(Keys.normalizeAddress("192.0.2.1")).isEqualTo("192.0.2.1");
	}

	@Test
	void leavesWhatIsNotAnAddressUnchanged() {
		assertThat(Keys.normalizeAddress("1::2::3")).isEqualTo("1::2::3");
		assertThat(Keys.normalizeAddress("unknown")).isEqualTo("unknown");
		assertThat(Keys.normalizeAddress("1:2:3:4:5:6:7:8:9")).isEqualTo("1:2:3:4:5:6:7:8:9");
	}

	@Test
	void keepsShortPlainKeys() {
		assertThat(Keys.safe("user:alice")).isEqualTo("user:alice");
		assertThat(Keys.safe("ip:2001:db8::1")).isEqualTo("ip:2001:db8::1");
	}

	@Test
	void hashesLongOrOddKeys() {
		assertThat(Keys.safe("header:{tag}")).startsWith("sha256:").hasSize(71);
		assertThat(Keys.safe("user:jos\u00e9")).startsWith("sha256:");
		assertThat(Keys.safe("header:a b")).startsWith("sha256:");
		assertThat(Keys.safe("user:" + "x".repeat(Keys.MAX_LENGTH))).startsWith("sha256:");
		assertThat(Keys.safe("header:{tag}")).isEqualTo(Keys.safe("header:{tag}")).isNotEqualTo(Keys.safe("header:{tag2}"));
	}

}
