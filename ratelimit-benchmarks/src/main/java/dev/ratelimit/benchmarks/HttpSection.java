package dev.ratelimit.benchmarks;

import java.nio.file.Path;

/** The HTTP benchmarks, run once the sample application serves limited endpoints. */
final class HttpSection {

	HttpSection(Suite.Mode mode, Path out) {
	}

	void run(Suite.Report report) {
		report.section("## HTTP\n\nNot measured yet: the sample application has no limited endpoint in this build.\n");
	}

}
