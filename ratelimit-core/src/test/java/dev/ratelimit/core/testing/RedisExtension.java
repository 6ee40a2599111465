package dev.ratelimit.core.testing;

/** Gives tests the run's {@link TestRedis}, as {@link ServerExtension} says; {@code REDIS_REQUIRED} fails them. */
public final class RedisExtension extends ServerExtension<TestRedis> {

	/** Gives tests the run's Redis. */
	public RedisExtension() {
		super(TestRedis.class, TestRedis::find, TestRedis::skipOrFail);
	}

}
