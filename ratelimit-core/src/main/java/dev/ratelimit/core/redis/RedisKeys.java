package dev.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

import dev.ratelimit.core.RateLimitPolicy;

/**
 * Names the keys a store writes: {@code <prefix>{<client key>}:<policy name>} for a client's state, with the
 * client key escaped so that it cannot break the hash tag, and {@code <prefix>fleet} for the fleet's members,
 * which no client key becomes since it has no brace.
 */
final class RedisKeys {

	/** The warm-up's client, already escaped: {@link #escape} writes every {@code %} of a client key as {@code %25}. */
	static final String WARM_UP_CLIENT = "%warm-up";

	private static final int SLOTS = 16384;

	private final String prefix;

	RedisKeys(String prefix) {
		Objects.requireNonNull(prefix, "keyPrefix must not be null");
		if (prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
			throw new IllegalArgumentException(
					"keyPrefix '" + prefix + "' must not contain braces: they would move the hash tag");
		}
		this.prefix = prefix;
	}

	/** The start of every key of a client whose key is written {@code escapedClient}, up to the policy name. */
	String client(String escapedClient) {
		return this.prefix + '{' + escapedClient + "}:";
	}

	String state(String escapedClient, RateLimitPolicy policy) {
		return client(escapedClient) + policy.name();
	}

	String fleet() {
		return this.prefix + "fleet";
	}

	/**
	 * Writes a client key so that it cannot break the hash tag around it: {@code %}, <code>{</code> and
	 * <code>}</code> become {@code %25}, {@code %7B} and {@code %7D}, and the empty key {@code %}, which no other
	 * key becomes.
	 */
	static String escape(String key) {
		if (key.isEmpty()) {
			return "%";
		}
		int i = 0;
		while (i < key.length() && !needsEscape(key.charAt(i))) {
			i++;
		}
		if (i == key.length()) {
			return key;
		}
		StringBuilder escaped = new StringBuilder(key.length() + 8).append(key, 0, i);
		for (; i < key.length(); i++) {
			char c = key.charAt(i);
			switch (c) {
				case '%' -> escaped.append("%25");
				case '{' -> escaped.append("%7B");
				case '}' -> escaped.append("%7D");
				default -> escaped.append(c);
			}
		}
		return escaped.toString();
	}

	/**
	 * The Redis Cluster slot of every key of a client whose key is written {@code escapedClient}: CRC16
	 * (XMODEM) of its hash tag, the escaped client key, modulo 16384.
	 */
	static int slot(String escapedClient) {
		int crc = 0;
		for (byte b : escapedClient.getBytes(StandardCharsets.UTF_8)) {
			crc ^= (b & 0xff) << 8;
			for (int bit = 0; bit < 8; bit++) {
				crc = ((crc & 0x8000) != 0) ? (crc << 1) ^ 0x1021 : crc << 1;
			}
			crc &= 0xffff;
		}
		return crc & (SLOTS - 1);
	}

	private static boolean needsEscape(char c) {
		return c == '%' || c == '{' || c == '}';
	}

}
