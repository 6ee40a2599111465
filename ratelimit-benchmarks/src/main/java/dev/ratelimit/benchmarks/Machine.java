package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What the numbers were measured on. */
final class Machine {

	private Machine() {
	}

	static String describe() {
		return Runtime.getRuntime().availableProcessors() + " cores (nproc), " + cpuModel() + ", JDK "
				+ System.getProperty("java.runtime.version") + " (" + System.getProperty("java.vm.name") + ")";
	}

	private static String cpuModel() {
		try {
			return Files.readAllLines(Path.of("/proc/cpuinfo"))
				.stream()
				.filter((line) -> line.startsWith("model name"))
				.map((line) -> line.substring(line.indexOf(':') + 1).trim())
				.findFirst()
				.orElse("unknown CPU");
		}
		catch (IOException ex) {
			return "unknown CPU";
		}
	}

}
