package dev.ratelimit.benchmarks;

import java.util.List;

/**
 * The conventions every command-line tool of the benchmarks follows: {@code --help} or {@code -h} prints the
 * usage and exits with 0; a bad argument prints what is wrong and the usage, without a stack trace, and exits
 * with 2.
 */
final class CommandLine {

	private CommandLine() {
	}

	static boolean wantsHelp(String[] args) {
		return List.of(args).contains("--help") || List.of(args).contains("-h");
	}

	/** Prints the usage and exits with 0 if asked for help. */
	static void helpIfAsked(String[] args, String usage) {
		if (wantsHelp(args)) {
			System.out.println(usage);
			System.exit(0);
		}
	}

	/** Prints the error and the usage and exits with 2. */
	static void fail(IllegalArgumentException ex, String usage) {
		System.err.println("error: " + ex.getMessage());
		System.err.println(usage);
		System.exit(2);
	}

}
