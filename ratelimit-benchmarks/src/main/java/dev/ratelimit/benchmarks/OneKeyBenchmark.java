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

/**
 * Decisions per microsecond on one key: from one thread, and from two threads that contend for it. The key
 * exists before measurement starts.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Benchmark)
public class OneKeyBenchmark {

	@Param({ "GCRA", "TOKEN_BUCKET", "FIXED_WINDOW", "SLIDING_WINDOW_COUNTER", "SLIDING_LOG", "LEAKY_BUCKET",
			"bucket4j", "resilience4j", "guava", "bucket4j-bare", "resilience4j-bare", "guava-bare" })
	public String contender;

	@Param({ "ALLOWED", "DENIED" })
	public Load load;

	private Contender limiter;

	private String key;

	@Setup
	public void setUp() {
		this.limiter = Contender.create(this.contender, this.load, 1024);
		this.key = "user:10000042";
		this.limiter.tryAcquire(this.key);
	}

	@Benchmark
	@Threads(1)
	public boolean oneThread(Outcomes outcomes) {
		return outcomes.count(this.limiter.tryAcquire(this.key));
	}

	@Benchmark
	@Threads(2)
	public boolean twoThreads(Outcomes outcomes) {
		return outcomes.count(this.limiter.tryAcquire(this.key));
	}

}
