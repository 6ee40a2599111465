package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Heap retained per key, each contender measured by {@link Footprint} in a JVM of its own.
 */
final class FootprintSection {

	private static final int KEYS = 1_000_000;

	private final Suite.Mode mode;

	private final Path out;

	FootprintSection(Suite.Mode mode, Path out) {
		this.mode = mode;
		this.out = out;
	}

	void run(Suite.Report report) throws IOException, InterruptedException {
		String[] contenders = (this.mode == Suite.Mode.QUICK) ? new String[] { "GCRA", "TOKEN_BUCKET", "bucket4j" }
				: new String[] { "GCRA", "TOKEN_BUCKET", "FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_LOG",
						"LEAKY_BUCKET", "bucket4j", "resilience4j", "guava" };
		StringBuilder md = new StringBuilder("## Heap per key\n\n");
		md.append("One request on each of ").append(String.format(Locale.ROOT, "%,d", KEYS))
			.append(" keys (100 per minute, burst 100), then the growth of the live heap divided by the number of ")
			.append("keys. Each contender runs in its own JVM (`-XX:+UseSerialGC -Xmx4g`, compressed oops), whose ")
			.append("full collection compacts the heap, so the heap used after `System.gc()` (read from ")
			.append("`MemoryMXBean`, repeated until stable) is the live data. The key strings are created before ")
			.append("the first reading and held by the harness: the figure is what the limiter adds per key (map ")
			.append("entry, table slot, state). Our store reads a frozen clock, so that no key turns idle and is ")
			.append("forgotten during the measurement: every key stays tracked.\n\n");
		md.append("| contender | bytes per key | keys tracked | key string (not counted) |\n|---|--:|--:|--:|\n");
		List<String[]> lines = new ArrayList<>();
		for (String contender : contenders) {
			String[] fields = measure(contender);
			lines.add(fields);
			md.append("| ").append(String.join(" | ", fields)).append(" |\n");
			if (contender.equals("GCRA")) {
				double bytes = Double.parseDouble(fields[1]);
				report.target("GCRA: ≤ 160 bytes retained per idle key", fields[1] + " B", bytes <= 160);
			}
		}
		Suite.write(this.out.resolve("footprint.txt"),
				String.join("\n", lines.stream().map((fields) -> String.join(" ", fields)).toList()) + "\n");
		report.section(md.toString());
	}

	private static String[] measure(String contender) throws IOException, InterruptedException {
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		Process process = new ProcessBuilder(java, "-XX:+UseSerialGC", "-Xms4g", "-Xmx4g", "-cp",
				System.getProperty("java.class.path"), Footprint.class.getName(), contender, Integer.toString(KEYS))
			.redirectError(ProcessBuilder.Redirect.INHERIT)
			.start();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
		if (process.waitFor() != 0) {
			throw new IllegalStateException("Footprint of " + contender + " failed: " + output);
		}
		System.out.println("footprint: " + output);
		return output.split(" ");
	}

}
