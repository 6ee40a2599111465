package dev.ratelimit.benchmarks;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the packaged suite the way docs/benchmarks.md tells users to, asking for its usage or giving it a bad argument:
 * it answers without running a benchmark and without a stack trace.
 */
class BenchmarksJarIT {

	/**
	 * What the JVM itself prints when options come from the environment, as where CI caps memory with
	 * {@code JAVA_TOOL_OPTIONS}: not the suite's output.
	 */
	private static final Pattern LAUNCHER_NOTICE = Pattern
		.compile("(?m)^(Picked up (JAVA_TOOL_OPTIONS|JDK_JAVA_OPTIONS|_JAVA_OPTIONS)|NOTE: Picked up JDK_JAVA_OPTIONS): .*\\R");

	@Test
	void printsItsUsageOnHelp() throws Exception {
		Run run = run("--help");
		assertThat(run.status).isZero();
		assertThat(run.out).startsWith("usage: java -jar ratelimit-benchmarks/target/benchmarks.jar [quick|full]");
		assertThat(run.err).isEmpty();
	}

	@Test
	void rejectsABadArgumentWithItsUsageAndNoStackTrace() throws Exception {
		Run run = run("--fast");
		assertThat(run.status).isEqualTo(2);
		assertThat(run.out).isEmpty();
		assertThat(run.err).startsWith("error: unknown argument '--fast'\nusage: ").doesNotContain("\tat ");
	}

	private static Run run(String... args) throws Exception {
		String[] command = new String[args.length + 3];
		command[0] = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		command[1] = "-jar";
		command[2] = Path.of("target", "benchmarks.jar").toString();
		System.arraycopy(args, 0, command, 3, args.length);
		Process process = new ProcessBuilder(command).start();
		String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		String err = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
		return new Run(process.exitValue(), out, LAUNCHER_NOTICE.matcher(err).replaceAll(""));
	}

	private record Run(int status, String out, String err) {
	}

}
