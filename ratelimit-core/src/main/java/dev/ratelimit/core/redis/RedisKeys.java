package dev.ratelimit.core.redis;

import java.nio.charset.StandardCharsets;
import java.util.Objects;


/**
 * Names the keys a store writes: {@code <prefix>{<client key>}:<policy name>} for a client's state, with the
 * client key escaped so that it cannot break the hash tag,
 * {@code <prefix>{<client key>}:<policy name>@<limit>/<window in microseconds>/<burst>} for its state under a
 * policy changed at runtime, and <code>&lt;prefix&gt;{%fleet}:members</code> and
 * <code>&lt;prefix&gt;{%fleet}:control</code> for the fleet's members and what they share, in one slot (and the
 * channel <code>&lt;prefix&gt;{%fleet}:events</code>), whose hash tag no client key becomes since an escaped key
 * never holds a {@code %} followed by anything but {@code 25}, {@code 7B} or {@code 7D}. A reset of every client
 * routes its calls with <code>&lt;prefix&gt;{%reset-all...}:</code> keys, which it never writes.
 */
final class RedisKeys {

	/** The warm-up's client, already escaped: {@link #escape} writes every {@code %} of a client key as {@code %25}. */
	static final String WARM_UP_CLIENT = "%warm-up";

	private static final int SLOTS = 16384;

	/** The hash tag of the fleet's keys, which no escaped client key is. */
	private static final String FLEET_TAG = "{%fleet}:";

	/** The hash tag of the keys that route a reset of every client, which no escaped client key is either. */
	private static final String RESET_ALL_TAG = "%reset-all";

	private final String prefix;

	RedisKeys(String prefix) {
		Objects.requireNonNull(prefix, "keyPrefix must not be null");
		if (prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
			throw new IllegalArgumentException(
					"keyPrefix '" + prefix + "' must not contain braces: they would move the hash tag");
		}
		this.prefix = prefix;
	}

	String prefix() {
		return this.prefix;
	}

	/** The start of every key of a client whose key is written {@code escapedClient}, up to the policy name. */
	String client(String escapedClient) {
		return this.prefix + '{' + escapedClient + "}:";
	}

	/** The key of a client's state under a policy whose state is named {@code stateName}. */
	String state(String escapedClient, String stateName) {
		return client(escapedClient) + stateName;
	}

	String fleet() {
		return this.prefix + FLEET_TAG + "members";
	}

	String control() {
		return this.prefix + FLEET_TAG + "control";
	}

	/**
	 * The pattern that every key of this prefix's clients, and of the fleet, matches in {@code SCAN}, and no key of
	 * another prefix: the prefix, its glob characters escaped, then the opening brace of the hash tag, which no
	 * prefix holds.
	 */
	String pattern() {
		StringBuilder pattern = new StringBuilder(this.prefix.length() + 4);
		for (char c : this.prefix.toCharArray()) {
			if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
				pattern.append('\\');
			}
			pattern.append(c);
		}
		return pattern.append("{*").toString();
	}

	/** The start of the fleet's keys, which a reset of every client keeps. */
	String fleetKeys() {
		return this.prefix + FLEET_TAG;
	}

	/**
	 * A key that routes a call to the node that serves {@code slot} on a Cluster: its hash tag is the first of
	 * {@code %reset-all-0}, {@code %reset-all-1}, ... in that slot, found in a few milliseconds.
	 */
	String resetAllRoute(int slot) {
		for (int i = 0;; i++) {
			String tag = RESET_ALL_TAG + "-" + i;
			if (crc16Slot(tag) == slot) {
				return this.prefix + '{' + tag + "}:";
			}
		}
	}

	/** The key that routes the calls of a reset of every client on a single Redis. */
	String resetAllRoute() {
		return this.prefix + '{' + RESET_ALL_TAG + "}:";
	}

	/** The Pub/Sub channel on which control.lua announces changes and resets. */
	String channel() {
		return this.prefix + FLEET_TAG + "events";
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
		return crc16Slot(escapedClient);
	}

	/**
	 * The Redis Cluster slot of a key the store writes, as Redis computes it: of its hash tag, the text between
	 * its first <code>{</code> and the next <code>}</code>, if not empty, else of the whole key.
	 */
	static int slotOfKey(String key) {
		int open = key.indexOf('{');
		int close = (open >= 0) ? key.indexOf('}', open + 1) : -1;
		return crc16Slot((close > open + 1) ? key.substring(open + 1, close) : key);
	}

	private static int crc16Slot(String text) {
		int crc = 0;
		for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
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
