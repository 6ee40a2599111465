package dev.ratelimit.core.replay;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the packaged jar the way docs/algorithms.md tells users to.
 */
class ReplayJarIT {

	@Test
	void runsAsAnExecutableJar(@TempDir Path temp) throws Exception {
		Path trace = Files.writeString(temp.resolve("trace.txt"), "9.9\n".repeat(10) + "10.1\n".repeat(10));
		Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				"-jar", jar().toString(), "--limit", "10", "--window", "10s", "--summary")
			.redirectInput(trace.toFile())
			.redirectError(ProcessBuilder.Redirect.INHERIT)
			.start();
		String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
		assertThat(process.exitValue()).isZero();
		assertThat(out).containsPattern("SLIDING_WINDOW_COUNTER\\s+20\\s+11\\s+9\\s");
	}

	private static Path jar() throws Exception {
		try (Stream<Path> files = Files.list(Path.of("target"))) {
			return files.filter((p) -> p.getFileName().toString().matches("ratelimit-core-[^-]+(-SNAPSHOT)?\\.jar"))
				.findFirst()
				.orElseThrow(() -> new IllegalStateException("No packaged jar in target" + File.separator));
		}
	}

}
