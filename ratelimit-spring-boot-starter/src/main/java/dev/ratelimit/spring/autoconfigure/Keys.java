package dev.ratelimit.spring.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Turns what identifies a client into a key that any store accepts.
 */
final class Keys {

	/** Longer keys are hashed: they would waste memory in the store and say nothing a hash does not. */
	static final int MAX_LENGTH = 200;

	private static final Pattern IPV4 = Pattern
		.compile("(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}");

	private static final Pattern HEX_GROUP = Pattern.compile("[0-9A-Fa-f]{1,4}");

	private Keys() {
	}

	/**
	 * Returns {@code key} itself when it is short and made of printable ASCII other than braces (which Redis
	 * reads as a hash tag), otherwise {@code sha256:} and the hex SHA-256 of its UTF-8 bytes.
	 */
	static String safe(String key) {
		if (key.length() <= MAX_LENGTH && isPlain(key)) {
			return key;
		}
		try {
			byte[] hash = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
			return "sha256:" + HexFormat.of().formatHex(hash);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("Every Java platform provides SHA-256", ex);
		}
	}

	private static boolean isPlain(String key) {
		for (int i = 0; i < key.length(); i++) {
			char c = key.charAt(i);
			if (c <= ' ' || c > '~' || c == '{' || c == '}') {
				return false;
			}
		}
		return true;
	}

	/**
	 * Returns one spelling per address: IPv6 in its RFC 5952 form (lower case, no leading zeros, the longest
	 * run of zero groups compressed, no zone), an IPv4-mapped IPv6 address as IPv4. Anything that is not an
	 * address literal is returned unchanged, never looked up.
	 */
	static String normalizeAddress(String address) {
		String literal = address;
		if (literal.length() > 2 && literal.charAt(0) == '[' && literal.charAt(literal.length() - 1) == ']') {
			literal = literal.substring(1, literal.length() - 1);
		}
		if (literal.indexOf(':') < 0) {
			return literal;
		}
		int zone = literal.indexOf('%');
		int[] groups = parseIpv6((zone >= 0) ? literal.substring(0, zone) : literal);
		if (groups == null) {
			return address;
		}
		if (groups[0] == 0 && groups[1] == 0 && groups[2] == 0 && groups[3] == 0 && groups[4] == 0
				&& groups[5] == 0xffff) {
			return (groups[6] >> 8) + "." + (groups[6] & 0xff) + "." + (groups[7] >> 8) + "." + (groups[7] & 0xff);
		}
		return formatIpv6(groups);
	}

	private static int @Nullable [] parseIpv6(String text) {
		int gap = text.indexOf("::");
		if (gap >= 0 && text.indexOf("::", gap + 1) >= 0) {
			return null;
		}
		int[] head = parseGroups((gap >= 0) ? text.substring(0, gap) : text, gap < 0);
		int[] tail = (gap >= 0) ? parseGroups(text.substring(gap + 2), true) : new int[0];
		if (head == null || tail == null) {
			return null;
		}
		int count = head.length + tail.length;
		if ((gap < 0 && count != 8) || (gap >= 0 && count > 7)) {
			return null;
		}
		int[] groups = new int[8];
		System.arraycopy(head, 0, groups, 0, head.length);
		System.arraycopy(tail, 0, groups, 8 - tail.length, tail.length);
		return groups;
	}

	private static int @Nullable [] parseGroups(String part, boolean mayEndInIpv4) {
		if (part.isEmpty()) {
			return new int[0];
		}
		String[] pieces = part.split(":", -1);
		String last = pieces[pieces.length - 1];
		boolean endsInIpv4 = mayEndInIpv4 && last.indexOf('.') >= 0;
		int[] groups = new int[pieces.length + (endsInIpv4 ? 1 : 0)];
		for (int i = 0; i < pieces.length - (endsInIpv4 ? 1 : 0); i++) {
			if (!HEX_GROUP.matcher(pieces[i]).matches()) {
				return null;
			}
			groups[i] = Integer.parseInt(pieces[i], 16);
		}
		if (endsInIpv4) {
			if (!IPV4.matcher(last).matches()) {
				return null;
			}
			String[] octets = last.split("\\.");
			groups[groups.length - 2] = (Integer.parseInt(octets[0]) << 8) | Integer.parseInt(octets[1]);
			groups[groups.length - 1] = (Integer.parseInt(octets[2]) << 8) | Integer.parseInt(octets[3]);
		}
		return groups;
	}

	private static String formatIpv6(int[] groups) {
		int bestStart = -1;
		int bestLength = 1;
		for (int i = 0; i < 8;) {
			int j = i;
			while (j < 8 && groups[j] == 0) {
				j++;
			}
			if (j - i > bestLength) {
				bestStart = i;
				bestLength = j - i;
			}
			i = Math.max(j, i + 1);
		}
		StringBuilder text = new StringBuilder(39);
		for (int i = 0; i < 8; i++) {
			if (i == bestStart) {
				text.append("::");
				i += bestLength - 1;
				continue;
			}
			if (text.length() > 0 && text.charAt(text.length() - 1) != ':') {
				text.append(':');
			}
			text.append(Integer.toHexString(groups[i]));
		}
		return text.toString();
	}

}
