package dev.ratelimit.spring.redis;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

final class Replies {

	private Replies() {
	}

	/** The rate limiting scripts' reply: an array of integers, whatever else a client may hand back. */
	static List<Long> integers(@Nullable Object reply) {
		if (!(reply instanceof List<?> values)) {
			throw new IllegalStateException("Expected an array from the rate limiting script, got " + reply);
		}
		List<Long> integers = new ArrayList<>(values.size());
		for (Object value : values) {
			if (!(value instanceof Long integer)) {
				throw new IllegalStateException("Expected integers from the rate limiting script, got " + reply);
			}
			integers.add(integer);
		}
		return integers;
	}

}
