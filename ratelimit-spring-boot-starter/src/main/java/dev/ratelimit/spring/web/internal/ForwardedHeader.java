package dev.ratelimit.spring.web.internal;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Reads the {@code for=} node of each element of an RFC 7239 {@code Forwarded} header, such as
 * {@code for=192.0.2.60;proto=http, for="[2001:db8:cafe::17]:4711"}. A value that does not parse (an unclosed
 * quote, a pair without {@code =}) makes the whole header unreadable, as quotes decide where its elements
 * start and end.
 */
final class ForwardedHeader {

	private ForwardedHeader() {
	}

	/**
	 * Returns the address of each element's {@code for=} node, left to right: null for an element that names no
	 * address ({@code unknown}, an obfuscated identifier, no or two {@code for=}); a single null if the header
	 * does not parse.
	 * @param lines the header's lines, in order
	 */
	static List<@Nullable IpAddress> hops(List<String> lines) {
		List<@Nullable IpAddress> hops = new ArrayList<>();
		for (String line : lines) {
			if (!new Reader(line).read(hops)) {
				List<@Nullable IpAddress> unreadable = new ArrayList<>(1);
				unreadable.add(null);
				return unreadable;
			}
		}
		return hops;
	}

	private static final class Reader {

		private final String text;

		private int at;

		Reader(String text) {
			this.text = text;
		}

		/** Adds the node of every element; false if the line does not parse. */
		boolean read(List<@Nullable IpAddress> hops) {
			for (;;) {
				String node = null;
				int nodes = 0;
				for (;;) {
					skipWhitespace();
					if (!atSeparator()) {
						String name = token();
						if (name.isEmpty() || !consume('=')) {
							return false;
						}
						String value = value();
						if (value == null) {
							return false;
						}
						if (name.equalsIgnoreCase("for")) {
							node = value;
							nodes++;
						}
						skipWhitespace();
					}
					if (!consume(';')) {
						break;
					}
				}
				hops.add((nodes == 1) ? ClientAddresses.node(node) : null);
				if (this.at == this.text.length()) {
					return true;
				}
				if (!consume(',')) {
					return false;
				}
			}
		}

		private boolean atSeparator() {
			return this.at == this.text.length() || this.text.charAt(this.at) == ';'
					|| this.text.charAt(this.at) == ',';
		}

		private void skipWhitespace() {
			while (this.at < this.text.length()
					&& (this.text.charAt(this.at) == ' ' || this.text.charAt(this.at) == '\t')) {
				this.at++;
			}
		}

		private boolean consume(char c) {
			if (this.at < this.text.length() && this.text.charAt(this.at) == c) {
				this.at++;
				return true;
			}
			return false;
		}

		private String token() {
			int start = this.at;
			while (this.at < this.text.length() && isTokenChar(this.text.charAt(this.at))) {
				this.at++;
			}
			return this.text.substring(start, this.at);
		}

		/** Reads a token, read leniently to take an unquoted node with a colon, or a quoted string. */
		private @Nullable String value() {
			if (!consume('"')) {
				int start = this.at;
				while (this.at < this.text.length() && (isTokenChar(this.text.charAt(this.at))
						|| this.text.charAt(this.at) == ':' || this.text.charAt(this.at) == '['
						|| this.text.charAt(this.at) == ']')) {
					this.at++;
				}
				return (this.at > start) ? this.text.substring(start, this.at) : null;
			}
			StringBuilder value = new StringBuilder();
			while (this.at < this.text.length()) {
				char c = this.text.charAt(this.at++);
				if (c == '"') {
					return value.toString();
				}
				if (c == '\\') {
					if (this.at == this.text.length()) {
						return null;
					}
					c = this.text.charAt(this.at++);
				}
				if (c < ' ' && c != '\t' || c == 0x7f) {
					return null;
				}
				value.append(c);
			}
			return null;
		}

		private static boolean isTokenChar(char c) {
			return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
					|| "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
		}

	}

}
