package dev.ratelimit.benchmarks;

import java.nio.file.Path;

/** The Redis benchmarks, run once the Redis store exists. */
final class RedisSection {

	RedisSection(Suite.Mode mode, Path out) {
	}

	void run(Suite.Report report) {
		report.section("## Redis\n\nNot measured yet: the Redis store is not part of this build.\n");
	}

}
