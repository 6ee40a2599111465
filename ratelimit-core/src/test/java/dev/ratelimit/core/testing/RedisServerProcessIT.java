package dev.ratelimit.core.testing;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The faults a {@link RedisServerProcess} can be put in, each seen from a client: a paused process answers
 * nothing until resumed, paused writes wait while reads answer, a full memory refuses writes, a replica
 * refuses them as read-only.
 */
class RedisServerProcessIT {

	private @Nullable RedisServerProcess server;

	@BeforeEach
	void startServer() {
		if (!RedisServerProcess.isAvailable()) {
			TestRedis.skipOrFail("there is no redis-server on the PATH to put in faults");
		}
		this.server = RedisServerProcess.start();
	}

	@AfterEach
	void stopServer() {
		if (this.server != null) {
			this.server.close();
		}
	}

	@Test
	void answersNothingWhilePausedAndEverythingOnceResumed() throws Exception {
		this.server.pause();
		CompletableFuture<String> ping = CompletableFuture.supplyAsync(() -> this.server.command("PING"));
		Thread.sleep(300);
		assertThat(ping).isNotDone();
		this.server.resume();
		assertThat(ping.get(5, TimeUnit.SECONDS)).isEqualTo("+PONG");
	}

	@Test
	void stopsEvenWhilePaused() {
		this.server.pause();
		long started = System.nanoTime();
		this.server.stop();
		// a paused process would ignore the polite stop until the forced one, ten seconds later
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
	}

	@Test
	void holdsWritesButAnswersReadsDuringAClientPause() throws Exception {
		this.server.clientPause(500);
		long started = System.nanoTime();
		assertThat(this.server.command("GET", "key")).isEqualTo("$-1");
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofMillis(400));
		assertThat(this.server.command("SET", "key", "value")).isEqualTo("+OK");
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(450));
	}

	@Test
	void refusesWritesOnceMemoryIsFull() {
		this.server.configSet("maxmemory-policy", "noeviction");
		this.server.configSet("maxmemory", "1");
		assertThat(this.server.command("SET", "key", "value")).startsWith("-OOM");
		assertThat(this.server.command("GET", "key")).isEqualTo("$-1");
	}

	@Test
	void namesTheSettingItCannotChange() {
		assertThatIllegalStateException().isThrownBy(() -> this.server.configSet("no-such-setting", "1"))
			.withMessageStartingWith("Redis on port " + this.server.port() + " refused CONFIG SET no-such-setting 1: -ERR");
	}

	@Test
	void refusesWritesAsAReplicaAndAcceptsThemWhenPromoted() {
		try (RedisServerProcess primary = RedisServerProcess.start()) {
			this.server.replicaOf(primary);
			assertThat(this.server.command("SET", "key", "value")).startsWith("-READONLY");
			this.server.promote();
			assertThat(this.server.command("SET", "key", "value")).isEqualTo("+OK");
		}
	}

}
