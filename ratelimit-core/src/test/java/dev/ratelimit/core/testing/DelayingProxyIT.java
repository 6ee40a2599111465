package dev.ratelimit.core.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The proxy in front of a real Redis: replies late by the delay while commands run on time, on time again
 * after a resume, nothing while held, and connections gone when dropped.
 */
@ExtendWith(RedisExtension.class)
class DelayingProxyIT {

	private static final Duration DELAY = Duration.ofMillis(400);

	private TestRedis redis;

	private DelayingProxy proxy;

	@BeforeEach
	void startProxy(TestRedis redis) {
		this.redis = redis;
		this.proxy = DelayingProxy.start(RedisURI.create(redis.uri()).getPort());
	}

	@AfterEach
	void stopProxy() {
		this.proxy.close();
	}

	@Test
	void repliesLateByTheDelayWhileTheCommandRunsOnTime() throws Exception {
		String key = "proxy:" + ThreadLocalRandom.current().nextLong();
		try (Resp client = new Resp(this.proxy.port())) {
			assertThat(client.call("PING")).isEqualTo("+PONG");
			this.proxy.delayReplies(DELAY);
			long started = System.nanoTime();
			client.send("SET", key, "v");
			long ranAfter = awaitValue(key);
			assertThat(client.readLine()).isEqualTo("+OK");
			long repliedAfter = System.nanoTime() - started;
			assertThat(Duration.ofNanos(repliedAfter)).isGreaterThanOrEqualTo(DELAY);
			assertThat(Duration.ofNanos(ranAfter)).isLessThan(DELAY);
		}
	}

	@Test
	void repliesOnTimeAfterAResume() throws Exception {
		try (Resp client = new Resp(this.proxy.port())) {
			this.proxy.delayReplies(DELAY);
			assertThat(timed(() -> assertThat(client.call("PING")).isEqualTo("+PONG"))).isGreaterThanOrEqualTo(DELAY);
			this.proxy.resume();
			assertThat(timed(() -> assertThat(client.call("PING")).isEqualTo("+PONG"))).isLessThan(DELAY);
		}
	}

	@Test
	void releasesADelayedReplyAtOnceOnAResume() throws Exception {
		try (Resp client = new Resp(this.proxy.port())) {
			this.proxy.delayReplies(Duration.ofMinutes(1));
			client.send("PING");
			client.socket.setSoTimeout(200);
			assertThatExceptionOfType(SocketTimeoutException.class).isThrownBy(client::readLine);
			this.proxy.resume();
			client.socket.setSoTimeout(5000);
			assertThat(client.readLine()).isEqualTo("+PONG");
		}
	}

	@Test
	void forwardsNothingWhileHeldAndEverythingOnResume() throws Exception {
		String key = "proxy:" + ThreadLocalRandom.current().nextLong();
		try (Resp client = new Resp(this.proxy.port())) {
			assertThat(client.call("PING")).isEqualTo("+PONG");
			this.proxy.hold();
			client.send("SET", key, "v");
			client.socket.setSoTimeout(300);
			assertThatExceptionOfType(SocketTimeoutException.class).isThrownBy(client::readLine);
			// a hung server runs nothing either
			assertThat(this.redis.commands().get(key)).isNull();
			this.proxy.resume();
			client.socket.setSoTimeout(5000);
			assertThat(client.readLine()).isEqualTo("+OK");
			assertThat(this.redis.commands().get(key)).isEqualTo("v");
		}
	}

	@Test
	void dropsEveryConnectionAndAcceptsNewOnes() throws Exception {
		try (Resp first = new Resp(this.proxy.port()); Resp second = new Resp(this.proxy.port())) {
			assertThat(first.call("PING")).isEqualTo("+PONG");
			assertThat(second.call("PING")).isEqualTo("+PONG");
			assertThat(this.proxy.dropConnections()).isEqualTo(2);
			first.socket.setSoTimeout(5000);
			assertThat(first.socket.getInputStream().read()).isEqualTo(-1);
		}
		try (Resp again = new Resp(this.proxy.port())) {
			assertThat(again.call("PING")).isEqualTo("+PONG");
		}
	}

	@Test
	void carriesARedisClientsConnection() throws Exception {
		RedisClient client = RedisClient.create(this.proxy.uri());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			assertThat(connection.sync().ping()).isEqualTo("PONG");
			this.proxy.delayReplies(DELAY);
			assertThat(timed(() -> assertThat(connection.sync().ping()).isEqualTo("PONG")))
				.isGreaterThanOrEqualTo(DELAY);
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void rejectsANegativeDelay() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.proxy.delayReplies(Duration.ofMillis(-1)))
			.withMessage("delay must not be negative, was PT-0.001S");
	}

	/** Nanoseconds until Redis holds the key, read directly rather than through the proxy. */
	private long awaitValue(String key) throws InterruptedException {
		long started = System.nanoTime();
		while (this.redis.commands().get(key) == null) {
			if (System.nanoTime() - started > TimeUnit.SECONDS.toNanos(10)) {
				throw new AssertionError("Redis never ran the command");
			}
			Thread.sleep(1);
		}
		return System.nanoTime() - started;
	}

	private static Duration timed(ThrowingRunnable call) throws Exception {
		long started = System.nanoTime();
		call.run();
		return Duration.ofNanos(System.nanoTime() - started);
	}

	@FunctionalInterface
	private interface ThrowingRunnable {

		void run() throws Exception;

	}

	/** Commands in RESP over a plain socket, each reply read as its first line. */
	private static final class Resp implements AutoCloseable {

		final Socket socket;

		Resp(int port) throws IOException {
			this.socket = new Socket(InetAddress.getLoopbackAddress(), port);
			this.socket.setSoTimeout(5000);
		}

		String call(String... arguments) throws IOException {
			send(arguments);
			return readLine();
		}

		void send(String... arguments) throws IOException {
			StringBuilder request = new StringBuilder("*").append(arguments.length).append("\r\n");
			for (String argument : arguments) {
				request.append('$').append(argument.length()).append("\r\n").append(argument).append("\r\n");
			}
			OutputStream out = this.socket.getOutputStream();
			out.write(request.toString().getBytes(StandardCharsets.US_ASCII));
			out.flush();
		}

		String readLine() throws IOException {
			InputStream in = this.socket.getInputStream();
			StringBuilder line = new StringBuilder();
			for (int c = in.read(); c != '\n'; c = in.read()) {
				if (c == -1) {
					throw new IOException("Connection closed");
				}
				if (c != '\r') {
					line.append((char) c);
				}
			}
			return line.toString();
		}

		@Override
		public void close() throws IOException {
			this.socket.close();
		}

	}

}
