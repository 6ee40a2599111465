package dev.ratelimit.benchmarks;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * Decisions per microsecond from two threads over many keys, each thread walking its own part of a
 * pre-generated Zipf stream. Every key has been asked once before measurement starts, so the run measures
 * lookups and decisions on keys that exist (our store may still forget idle ones, as it does in production).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Benchmark)
public class ManyKeysBenchmark {

	private static final int STREAM_LENGTH = 1 << 20;

	@Param({ "GCRA", "TOKEN_BUCKET", "FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_LOG", "LEAKY_BUCKET",
			"bucket4j", "resilience4j", "guava", Contender.MAP_FLOOR })
	public String contender;

	@Param({ "ALLOWED", "DENIED" })
	public Load load;

	@Param({ "10000", "1000000" })
	public int keys;

	private Contender limiter;

	private String[] stream;

	@Setup
	public void setUp() {
		Keys generated = Keys.zipf(this.keys, STREAM_LENGTH, 42);
		this.stream = generated.stream();
		this.limiter = Contender.create(this.contender, this.load, 2 * this.keys);
		for (String key : generated.keys()) {
			this.limiter.tryAcquire(key);
		}
	}

	@Benchmark
	@Threads(2)
	public boolean twoThreads(Cursor cursor, Outcomes outcomes) {
		String key = this.stream[cursor.next++ & (STREAM_LENGTH - 1)];
		return outcomes.count(this.limiter.tryAcquire(key));
	}

	/** Where one thread is in the stream; threads start half the stream apart. */
	@State(Scope.Thread)
	public static class Cursor {

		int next;

		@Setup
		public void start(ThreadParams thread) {
			this.next = thread.getThreadIndex() * (STREAM_LENGTH / 2);
		}

	}

}
