package dev.ratelimit.spring.web.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Turns what identifies a client into a key that any store accepts.
 */
public final class Keys {

	/** Longer keys are hashed: they would waste memory in the store and say nothing a hash does not. */
	static final int MAX_LENGTH = 200;

	private Keys() {
	}

	/**
	 * Returns {@code key} itself when it is short and made of printable ASCII other than braces (which Redis
	 * reads as a hash tag), otherwise {@code sha256:} and the hex SHA-256 of its UTF-8 bytes.
	 */
	public static String safe(String key) {
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

}
