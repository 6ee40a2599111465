package dev.ratelimit.core.testing;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

import io.lettuce.core.api.sync.RedisCommands;

/**
 * How many times Redis ran each command, from {@code INFO commandstats}: commands run by scripts count under
 * their own names ({@code set}, {@code rpush}, ...) as well as the script's ({@code evalsha}, {@code eval}),
 * subcommands as {@code client|pause}. The difference of two snapshots tells what Redis ran in between, for
 * instance that a call the store gave up on never ran later. Every snapshot is itself an {@code info} call.
 */
public final class CommandStats {

	private static final String PREFIX = "cmdstat_";

	private final Map<String, Long> calls;

	private CommandStats(Map<String, Long> calls) {
		this.calls = calls;
	}

	/**
	 * Reads what Redis ran so far.
	 * @param commands synchronous commands on the Redis to read
	 * @return the calls per command, since Redis started or its statistics were last reset
	 */
	public static CommandStats read(RedisCommands<String, String> commands) {
		return parse(commands.info("commandstats"));
	}

	/**
	 * Reads the reply of {@code INFO commandstats}.
	 * @param info the reply, lines such as {@code cmdstat_evalsha:calls=3,usec=41,...}
	 * @return the calls per command
	 */
	static CommandStats parse(String info) {
		Map<String, Long> calls = new TreeMap<>();
		for (String line : info.split("\r?\n")) {
			if (!line.startsWith(PREFIX)) {
				continue;
			}
			int colon = line.indexOf(':');
			String command = line.substring(PREFIX.length(), colon);
			for (String field : line.substring(colon + 1).split(",")) {
				if (field.startsWith("calls=")) {
					calls.put(command, Long.parseLong(field.substring("calls=".length())));
				}
			}
			if (!calls.containsKey(command)) {
				throw new IllegalArgumentException("No calls= in the commandstats line '" + line + "'");
			}
		}
		return new CommandStats(calls);
	}

	/**
	 * Returns how many times Redis ran a command.
	 * @param command the command in lower case, such as {@code evalsha}
	 * @return the number of calls, 0 for a command never run
	 */
	public long calls(String command) {
		return this.calls.getOrDefault(command, 0L);
	}

	/**
	 * Returns what Redis ran between an earlier snapshot and this one.
	 * @param earlier the snapshot taken before
	 * @return the calls per command in between, commands that did not run left out
	 */
	public CommandStats since(CommandStats earlier) {
		Map<String, Long> difference = new TreeMap<>();
		earlier.calls.keySet().stream().filter((command) -> !this.calls.containsKey(command)).findFirst()
			.ifPresent((command) -> {
				throw new IllegalArgumentException("Redis ran " + command + " before the earlier snapshot but "
						+ "not since it started: it restarted or its statistics were reset in between");
			});
		this.calls.forEach((command, count) -> {
			long ran = count - earlier.calls(command);
			if (ran < 0) {
				throw new IllegalArgumentException("Redis ran " + command + " fewer times than in the earlier "
						+ "snapshot: it restarted or its statistics were reset in between");
			}
			if (ran > 0) {
				difference.put(command, ran);
			}
		});
		return new CommandStats(difference);
	}

	/**
	 * Returns the calls of every command that ran, by name.
	 * @return the calls per command, sorted by name
	 */
	public Map<String, Long> asMap() {
		return Collections.unmodifiableMap(this.calls);
	}

	@Override
	public String toString() {
		return this.calls.toString();
	}

}
