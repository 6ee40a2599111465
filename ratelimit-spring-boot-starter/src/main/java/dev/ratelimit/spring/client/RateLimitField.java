package dev.ratelimit.spring.client;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * Reads the {@code RateLimit} response field of the IETF draft "RateLimit header fields for HTTP": a
 * structured-field List (RFC 9651) whose members name a policy and carry as parameters the quota units
 * remaining ({@code r}) and the seconds until the quota returns ({@code t}), for example
 * {@code "default";r=0;t=10}. The whole RFC 9651 List syntax is accepted, parameters in any order; a field that
 * does not parse is ignored as a whole, as RFC 9651 requires.
 */
final class RateLimitField {

	private final String input;

	private int position;

	private RateLimitField(String input) {
		this.input = input;
	}

	/**
	 * Returns how long until the quota returns when some policy in the field reports none left.
	 * @param lines the field lines, combined into one list as RFC 9651 prescribes; empty when the field is
	 * absent
	 * @return the longest {@code t} among the members with {@code r=0}, or {@code null} when no member reports
	 * an exhausted quota or when the field does not parse
	 */
	static @Nullable Duration exhaustedFor(List<String> lines) {
		if (lines.isEmpty()) {
			return null;
		}
		List<Map<String, Object>> members;
		try {
			members = new RateLimitField(String.join(",", lines)).parseList();
		}
		catch (IllegalArgumentException ex) {
			return null;
		}
		long longest = -1;
		for (Map<String, Object> parameters : members) {
			if (parameters.get("r") instanceof Long remaining && remaining == 0
					&& parameters.get("t") instanceof Long reset && reset >= 0) {
				longest = Math.max(longest, reset);
			}
		}
		return (longest >= 0) ? Duration.ofSeconds(longest) : null;
	}

	/** Parses the whole input as a List and returns the parameters of each member. */
	private List<Map<String, Object>> parseList() {
		List<Map<String, Object>> members = new ArrayList<>();
		skipSpaces();
		while (!atEnd()) {
			members.add(parseMember());
			skipOptionalWhitespace();
			if (atEnd()) {
				return members;
			}
			expect(',');
			skipOptionalWhitespace();
			if (atEnd()) {
				throw fail("trailing comma");
			}
		}
		return members;
	}

	private Map<String, Object> parseMember() {
		if (peek() != '(') {
			parseBareItem();
			return parseParameters();
		}
		this.position++;
		while (true) {
			skipSpaces();
			if (!atEnd() && peek() == ')') {
				this.position++;
				return parseParameters();
			}
			parseBareItem();
			parseParameters();
			if (atEnd() || (peek() != ' ' && peek() != ')')) {
				throw fail("unterminated inner list");
			}
		}
	}

	private Map<String, Object> parseParameters() {
		Map<String, Object> parameters = new HashMap<>();
		while (!atEnd() && peek() == ';') {
			this.position++;
			skipSpaces();
			String key = parseKey();
			Object value = Boolean.TRUE;
			if (!atEnd() && peek() == '=') {
				this.position++;
				value = parseBareItem();
			}
			parameters.put(key, value);
		}
		return parameters;
	}

	private String parseKey() {
		int start = this.position;
		if (atEnd() || !(isLowerAlpha(peek()) || peek() == '*')) {
			throw fail("key expected");
		}
		while (!atEnd() && isKeyChar(peek())) {
			this.position++;
		}
		return this.input.substring(start, this.position);
	}

	private Object parseBareItem() {
		if (atEnd()) {
			throw fail("item expected");
		}
		char c = peek();
		if (c == '-' || isDigit(c)) {
			return parseNumber();
		}
		if (c == '"') {
			return parseString();
		}
		if (c == '*' || isAlpha(c)) {
			return parseToken();
		}
		this.position++;
		return switch (c) {
			case ':' -> parseByteSequence();
			case '?' -> parseBoolean();
			case '@' -> parseDate();
			case '%' -> parseDisplayString();
			default -> throw fail("unexpected character");
		};
	}

	private Object parseNumber() {
		int start = this.position;
		if (peek() == '-') {
			this.position++;
		}
		int digitsStart = this.position;
		while (!atEnd() && isDigit(peek())) {
			this.position++;
		}
		int integerDigits = this.position - digitsStart;
		if (integerDigits == 0) {
			throw fail("digit expected");
		}
		if (atEnd() || peek() != '.') {
			if (integerDigits > 15) {
				throw fail("integer too long");
			}
			return Long.parseLong(this.input.substring(start, this.position));
		}
		this.position++;
		int fractionStart = this.position;
		while (!atEnd() && isDigit(peek())) {
			this.position++;
		}
		int fractionDigits = this.position - fractionStart;
		if (integerDigits > 12 || fractionDigits < 1 || fractionDigits > 3) {
			throw fail("malformed decimal");
		}
		return new BigDecimal(this.input.substring(start, this.position));
	}

	private String parseString() {
		this.position++;
		StringBuilder value = new StringBuilder();
		while (!atEnd()) {
			char c = this.input.charAt(this.position++);
			if (c == '"') {
				return value.toString();
			}
			if (c == '\\') {
				if (atEnd() || (peek() != '"' && peek() != '\\')) {
					throw fail("bad escape");
				}
				c = this.input.charAt(this.position++);
			}
			else if (c < 0x20 || c > 0x7e) {
				throw fail("character not allowed in a string");
			}
			value.append(c);
		}
		throw fail("unterminated string");
	}

	private String parseToken() {
		int start = this.position;
		this.position++;
		while (!atEnd() && (isTokenChar(peek()) || peek() == ':' || peek() == '/')) {
			this.position++;
		}
		return this.input.substring(start, this.position);
	}

	private String parseByteSequence() {
		int start = this.position;
		while (!atEnd() && peek() != ':') {
			char c = peek();
			if (!(isAlpha(c) || isDigit(c) || c == '+' || c == '/' || c == '=')) {
				throw fail("character not allowed in a byte sequence");
			}
			this.position++;
		}
		expect(':');
		return this.input.substring(start, this.position - 1);
	}

	private Boolean parseBoolean() {
		if (!atEnd() && (peek() == '0' || peek() == '1')) {
			return this.input.charAt(this.position++) == '1';
		}
		throw fail("boolean expected");
	}

	private Long parseDate() {
		if (atEnd() || !(peek() == '-' || isDigit(peek())) || !(parseNumber() instanceof Long seconds)) {
			throw fail("integer date expected");
		}
		return seconds;
	}

	private String parseDisplayString() {
		expect('"');
		int start = this.position;
		while (!atEnd()) {
			char c = this.input.charAt(this.position++);
			if (c == '"') {
				return this.input.substring(start, this.position - 1);
			}
			if (c < 0x20 || c > 0x7e) {
				throw fail("character not allowed in a display string");
			}
			if (c == '%') {
				for (int i = 0; i < 2; i++) {
					if (atEnd() || !(isDigit(peek()) || (peek() >= 'a' && peek() <= 'f'))) {
						throw fail("bad percent encoding");
					}
					this.position++;
				}
			}
		}
		throw fail("unterminated display string");
	}

	private void expect(char expected) {
		if (atEnd() || peek() != expected) {
			throw fail("'" + expected + "' expected");
		}
		this.position++;
	}

	private void skipSpaces() {
		while (!atEnd() && peek() == ' ') {
			this.position++;
		}
	}

	private void skipOptionalWhitespace() {
		while (!atEnd() && (peek() == ' ' || peek() == '\t')) {
			this.position++;
		}
	}

	private boolean atEnd() {
		return this.position >= this.input.length();
	}

	private char peek() {
		return this.input.charAt(this.position);
	}

	private IllegalArgumentException fail(String reason) {
		return new IllegalArgumentException(reason + " at " + this.position);
	}

	private static boolean isDigit(char c) {
		return c >= '0' && c <= '9';
	}

	private static boolean isLowerAlpha(char c) {
		return c >= 'a' && c <= 'z';
	}

	private static boolean isAlpha(char c) {
		return isLowerAlpha(c) || (c >= 'A' && c <= 'Z');
	}

	private static boolean isKeyChar(char c) {
		return isLowerAlpha(c) || isDigit(c) || c == '_' || c == '-' || c == '.' || c == '*';
	}

	private static boolean isTokenChar(char c) {
		return isAlpha(c) || isDigit(c) || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
	}

}
