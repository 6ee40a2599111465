package dev.ratelimit.spring.web.internal;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests of key hashing.
 */
class KeysTests {

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
