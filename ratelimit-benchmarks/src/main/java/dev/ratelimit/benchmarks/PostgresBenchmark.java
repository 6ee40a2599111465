package dev.ratelimit.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * Decisions through a PostgreSQL on this machine ({@code -Dbench.postgres.url}), each call waiting for its
 * answer, from 1, 16 and 64 callers sharing the contender's pool of {@value PostgresContender#POOL_SIZE}
 * connections, on one key or over 10k keys: ours with GCRA and with the token bucket, and Bucket4j's PostgreSQL
 * backend on each of its two managers (see {@link PostgresContender}), under the ALLOWED load.
 * <p>
 * Every benchmark runs twice, each time in a fork of its own: once for the decisions per second
 * ({@link Mode#Throughput}) and once for the percentiles of the time a decision takes, JMH timing the calls
 * ({@link Mode#SampleTime}). Over 10k keys each caller walks its own part of a
 * pre-generated Zipf stream, and every key has been asked once before measurement starts, so that no measured
 * call creates a row. A run in which our store decided without the database even once fails.
 */
@BenchmarkMode({ Mode.Throughput, Mode.SampleTime })
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Benchmark)
public class PostgresBenchmark {

	private static final int STREAM_LENGTH = 1 << 20;

	/** Ours with each bucket algorithm, and Bucket4j on its advisory-lock and its row-lock manager. */
	@Param({ "GCRA", "TOKEN_BUCKET", PostgresContender.BUCKET4J, PostgresContender.BUCKET4J_FOR_UPDATE })
	public String contender;

	/** One key that every caller asks for, or 10k keys drawn from a Zipf distribution. */
	@Param({ "1", "10000" })
	public int keys;

	private PostgresContender opened;

	private String[] stream;

	@Setup
	public void open() throws Exception {
		String url = System.getProperty("bench.postgres.url");
		if (url == null) {
			throw new IllegalStateException("-Dbench.postgres.url is not set");
		}
		this.opened = PostgresContender.open(this.contender, url, Load.ALLOWED.peerPolicy());
		Keys generated = (this.keys == 1) ? null : Keys.zipf(this.keys, STREAM_LENGTH, 42);
		this.stream = (generated != null) ? generated.stream() : new String[] { "user:hot" };
		createRows((generated != null) ? generated.keys() : this.stream);
	}

	/** Asks every key once, from as many threads as the pool has connections. */
	private void createRows(String[] all) throws Exception {
		ExecutorService threads = Executors.newFixedThreadPool(PostgresContender.POOL_SIZE);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < PostgresContender.POOL_SIZE; t++) {
				int first = t;
				done.add(threads.submit(() -> {
					for (int i = first; i < all.length; i += PostgresContender.POOL_SIZE) {
						this.opened.limiter.tryAcquire(all[i]);
					}
					return null;
				}));
			}
			for (Future<?> future : done) {
				future.get();
			}
		}
		finally {
			threads.shutdown();
		}
	}

	@TearDown(Level.Iteration)
	public void checkEveryDecisionCameFromPostgres() {
		this.opened.checkEveryDecisionCameFromPostgres();
	}

	@TearDown
	public void close() {
		this.opened.close();
	}

	@Benchmark
	@Threads(1)
	public boolean oneThread(Cursor cursor, Outcomes outcomes) {
		return outcomes.count(this.opened.limiter.tryAcquire(cursor.next(this.stream)));
	}

	@Benchmark
	@Threads(16)
	public boolean sixteenThreads(Cursor cursor, Outcomes outcomes) {
		return outcomes.count(this.opened.limiter.tryAcquire(cursor.next(this.stream)));
	}

	@Benchmark
	@Threads(64)
	public boolean sixtyFourThreads(Cursor cursor, Outcomes outcomes) {
		return outcomes.count(this.opened.limiter.tryAcquire(cursor.next(this.stream)));
	}

	/** Where one caller is in the stream; callers start evenly apart in it. */
	@State(Scope.Thread)
	public static class Cursor {

		private int next;

		@Setup
		public void start(ThreadParams thread) {
			this.next = thread.getThreadIndex() * (STREAM_LENGTH / thread.getThreadCount());
		}

		String next(String[] stream) {
			return stream[this.next++ & (stream.length - 1)];
		}

	}

}
