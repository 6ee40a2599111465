package dev.ratelimit.spring.web.internal;

import java.util.Arrays;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * An IPv4 or IPv6 address read from its literal text, never looked up: four bytes for IPv4, sixteen for IPv6,
 * and an IPv4-mapped IPv6 address ({@code ::ffff:192.0.2.1}) read as the IPv4 address it maps, so that one host
 * has one address whichever way it is written.
 */
final class IpAddress {

	private static final Pattern IPV4 = Pattern
		.compile("(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}");

	private static final Pattern HEX_GROUP = Pattern.compile("[0-9A-Fa-f]{1,4}");

	private final byte[] bytes;

	private IpAddress(byte[] bytes) {
		this.bytes = bytes;
	}

	/**
	 * Returns the address written as {@code literal}: dotted IPv4, or IPv6 without brackets nor zone; null if
	 * it is no such literal.
	 */
	static @Nullable IpAddress parse(String literal) {
		if (literal.indexOf(':') < 0) {
			return IPV4.matcher(literal).matches() ? new IpAddress(ipv4(literal)) : null;
		}
		int[] groups = parseIpv6(literal);
		if (groups == null) {
			return null;
		}
		byte[] bytes = new byte[16];
		for (int i = 0; i < 8; i++) {
			bytes[2 * i] = (byte) (groups[i] >> 8);
			bytes[2 * i + 1] = (byte) groups[i];
		}
		if (isIpv4Mapped(bytes)) {
			return new IpAddress(Arrays.copyOfRange(bytes, 12, 16));
		}
		return new IpAddress(bytes);
	}

	/**
	 * Returns the address of a servlet container's remote address text, which may be bracketed and carry a
	 * zone ({@code [fe80::1%eth0]}), the zone dropped; null if it is no address literal.
	 */
	static @Nullable IpAddress parseRemote(String address) {
		String literal = address;
		if (literal.length() > 2 && literal.charAt(0) == '[' && literal.charAt(literal.length() - 1) == ']') {
			literal = literal.substring(1, literal.length() - 1);
		}
		int zone = literal.indexOf('%');
		return parse((zone >= 0 && literal.indexOf(':') >= 0) ? literal.substring(0, zone) : literal);
	}

	private static boolean isIpv4Mapped(byte[] bytes) {
		for (int i = 0; i < 10; i++) {
			if (bytes[i] != 0) {
				return false;
			}
		}
		return bytes[10] == (byte) 0xff && bytes[11] == (byte) 0xff;
	}

	private static byte[] ipv4(String literal) {
		String[] octets = literal.split("\\.");
		byte[] bytes = new byte[4];
		for (int i = 0; i < 4; i++) {
			bytes[i] = (byte) Integer.parseInt(octets[i]);
		}
		return bytes;
	}

	boolean isIpv6() {
		return this.bytes.length == 16;
	}

	/**
	 * Returns the host behind this address: the IPv4 address that a NAT64 translator embeds in an address of
	 * the well-known prefix {@code 64:ff9b::/96} or of the local-use prefix {@code 64:ff9b:1::/48} (RFC 6052,
	 * RFC 8215), else this address. Every IPv4 client of a translator shares its IPv6 networks, but not the IPv4
	 * address it embeds.
	 */
	IpAddress host() {
		if (!isIpv6() || this.bytes[0] != 0 || this.bytes[1] != 0x64 || this.bytes[2] != (byte) 0xff
				|| this.bytes[3] != (byte) 0x9b) {
			return this;
		}
		if (isZero(4, 12)) {
			return new IpAddress(Arrays.copyOfRange(this.bytes, 12, 16));
		}
		// the /48 prefix holds bits 32 to 63 of the address around octet 8, which RFC 6052 reserves as zero
		if (this.bytes[4] == 0 && this.bytes[5] == 1 && this.bytes[8] == 0) {
			return new IpAddress(new byte[] { this.bytes[6], this.bytes[7], this.bytes[9], this.bytes[10] });
		}
		return this;
	}

	private boolean isZero(int from, int to) {
		for (int i = from; i < to; i++) {
			if (this.bytes[i] != 0) {
				return false;
			}
		}
		return true;
	}

	/** Returns the number of bits of the address: 32 or 128. */
	int bits() {
		return this.bytes.length * 8;
	}

	/** Returns the address with every bit beyond the first {@code prefix} cleared. */
	IpAddress network(int prefix) {
		byte[] masked = this.bytes.clone();
		for (int bit = prefix; bit < masked.length * 8; bit++) {
			masked[bit / 8] &= (byte) ~(0x80 >>> (bit % 8));
		}
		return new IpAddress(masked);
	}

	/** Returns whether the first {@code prefix} bits of this address equal those of {@code other}. */
	boolean sharesPrefix(IpAddress other, int prefix) {
		if (other.bytes.length != this.bytes.length) {
			return false;
		}
		int whole = prefix / 8;
		for (int i = 0; i < whole; i++) {
			if (this.bytes[i] != other.bytes[i]) {
				return false;
			}
		}
		int rest = prefix % 8;
		if (rest == 0) {
			return true;
		}
		int mask = (0xff << (8 - rest)) & 0xff;
		return (this.bytes[whole] & mask) == (other.bytes[whole] & mask);
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return (other instanceof IpAddress address) && Arrays.equals(this.bytes, address.bytes);
	}

	@Override
	public int hashCode() {
		return Arrays.hashCode(this.bytes);
	}

	/**
	 * Returns the address in one spelling: dotted IPv4, or IPv6 in its RFC 5952 form (lower case, no leading
	 * zeros, the longest run of two or more zero groups compressed).
	 */
	@Override
	public String toString() {
		if (!isIpv6()) {
			return (this.bytes[0] & 0xff) + "." + (this.bytes[1] & 0xff) + "." + (this.bytes[2] & 0xff) + "."
					+ (this.bytes[3] & 0xff);
		}
		int[] groups = new int[8];
		for (int i = 0; i < 8; i++) {
			groups[i] = ((this.bytes[2 * i] & 0xff) << 8) | (this.bytes[2 * i + 1] & 0xff);
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
			byte[] octets = ipv4(last);
			groups[groups.length - 2] = ((octets[0] & 0xff) << 8) | (octets[1] & 0xff);
			groups[groups.length - 1] = ((octets[2] & 0xff) << 8) | (octets[3] & 0xff);
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
