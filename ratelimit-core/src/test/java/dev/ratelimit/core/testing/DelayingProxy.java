package dev.ratelimit.core.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A TCP proxy on a free loopback port in front of a Redis, forwarding both directions, that a fault test can
 * make late, hung or gone:
 * <ul>
 * <li>{@link #delayReplies(Duration)} holds back every byte from the server for the given time, so that
 * commands run in Redis on time and their replies arrive late;</li>
 * <li>{@link #hold()} stops all traffic both ways, as a hung server, without closing anything;</li>
 * <li>{@link #resume()} forwards everything on time again, the bytes held back included;</li>
 * <li>{@link #dropConnections()} closes every open connection, both sides, as a server that went away would;
 * new connections are accepted as before.</li>
 * </ul>
 * It holds at most {@link #MAX_CONNECTIONS} connections at a time, closing any beyond, so that its threads
 * (three per connection and one accepting) stay bounded; all of them are daemons and end with
 * {@link #close()}.
 */
public final class DelayingProxy implements AutoCloseable {

	/** How many connections the proxy holds at once. */
	public static final int MAX_CONNECTIONS = 64;

	private final InetSocketAddress target;

	private final ServerSocket server;

	private final Set<Connection> connections = ConcurrentHashMap.newKeySet();

	private final Thread acceptor;

	/** Guards the switches below; pumps wait on it while traffic is held. */
	private final Object lock = new Object();

	private long replyDelayNanos;

	/** When {@link #resume()} last released the bytes held back. */
	private long resumedNanos = System.nanoTime();

	private boolean held;

	private volatile boolean closed;

	private DelayingProxy(InetSocketAddress target, ServerSocket server) {
		this.target = target;
		this.server = server;
		this.acceptor = daemon("delaying-proxy-accept-" + server.getLocalPort(), this::accept);
	}

	/**
	 * Starts a proxy in front of a server on the loopback address.
	 * @param port the server's port on 127.0.0.1
	 * @return the running proxy, forwarding on time
	 */
	public static DelayingProxy start(int port) {
		try {
			ServerSocket server = new ServerSocket();
			server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
			DelayingProxy proxy = new DelayingProxy(new InetSocketAddress(InetAddress.getLoopbackAddress(), port),
					server);
			proxy.acceptor.start();
			return proxy;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot open a loopback port for the proxy", ex);
		}
	}

	/**
	 * Returns the proxy's port on 127.0.0.1.
	 * @return the port clients connect to
	 */
	public int port() {
		return this.server.getLocalPort();
	}

	/**
	 * Returns the URI that clients connect to.
	 * @return {@code redis://127.0.0.1:<port>}
	 */
	public String uri() {
		return "redis://127.0.0.1:" + port();
	}

	/**
	 * Delays every byte the server sends from now on by {@code delay}, in order; bytes already on their way
	 * keep their delay.
	 * @param delay how late replies arrive, zero or more
	 */
	public void delayReplies(Duration delay) {
		Objects.requireNonNull(delay, "delay must not be null");
		if (delay.isNegative()) {
			throw new IllegalArgumentException("delay must not be negative, was " + delay);
		}
		synchronized (this.lock) {
			this.replyDelayNanos = delay.toNanos();
		}
	}

	/**
	 * Stops forwarding in both directions, keeping connections open and every byte for later.
	 */
	public void hold() {
		synchronized (this.lock) {
			this.held = true;
		}
	}

	/**
	 * Forwards everything on time again: at once what was held back or delayed, then whatever comes.
	 */
	public void resume() {
		synchronized (this.lock) {
			this.held = false;
			this.replyDelayNanos = 0;
			this.resumedNanos = System.nanoTime();
			this.lock.notifyAll();
		}
	}

	/**
	 * Closes every open connection, client and server side.
	 * @return how many connections were closed
	 */
	public int dropConnections() {
		List<Connection> open = List.copyOf(this.connections);
		open.forEach(Connection::close);
		return open.size();
	}

	@Override
	public void close() {
		this.closed = true;
		try {
			this.server.close();
		}
		catch (IOException ex) {
			// closing on the way out: nothing left to do with a failure
		}
		dropConnections();
		synchronized (this.lock) {
			this.lock.notifyAll();
		}
		try {
			this.acceptor.join(TimeUnit.SECONDS.toMillis(5));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void accept() {
		while (!this.closed) {
			Socket client;
			try {
				client = this.server.accept();
			}
			catch (IOException ex) {
				// closed
				return;
			}
			if (this.connections.size() >= MAX_CONNECTIONS) {
				closeQuietly(client);
				continue;
			}
			Socket upstream = new Socket();
			try {
				upstream.connect(this.target, 5000);
			}
			catch (IOException ex) {
				// the server is away: the client sees its connection closed, as with no proxy
				closeQuietly(upstream);
				closeQuietly(client);
				continue;
			}
			Connection connection = new Connection(client, upstream);
			this.connections.add(connection);
			connection.start();
		}
	}

	/** Waits while traffic is held; false once the connection or the proxy is closed. */
	private boolean awaitFlowing(Connection connection) throws InterruptedException {
		synchronized (this.lock) {
			while (this.held && !this.closed && !connection.closed) {
				this.lock.wait(100);
			}
		}
		return !this.closed && !connection.closed;
	}

	private long replyDelayNanos() {
		synchronized (this.lock) {
			return this.replyDelayNanos;
		}
	}

	/** Whether the chunk is still to wait: not yet due, and read since the last {@link #resume()}. */
	private boolean waiting(Chunk chunk) {
		synchronized (this.lock) {
			return chunk.readNanos - this.resumedNanos >= 0 && System.nanoTime() - chunk.dueNanos < 0;
		}
	}

	private static Thread daemon(String name, Runnable task) {
		Thread thread = new Thread(task, name);
		thread.setDaemon(true);
		return thread;
	}

	private static void closeQuietly(Socket socket) {
		try {
			socket.close();
		}
		catch (IOException ex) {
			// already broken: nothing left to close
		}
	}

	/** Bytes read from the server, when, and the instant at which they may be passed on. */
	private record Chunk(byte[] bytes, long readNanos, long dueNanos) {
	}

	/** One client connection and its connection to the server, with the threads that carry their bytes. */
	private final class Connection {

		private final Socket client;

		private final Socket upstream;

		private final LinkedBlockingQueue<Chunk> replies = new LinkedBlockingQueue<>();

		private final List<Thread> threads;

		private volatile boolean closed;

		Connection(Socket client, Socket upstream) {
			this.client = client;
			this.upstream = upstream;
			String name = "delaying-proxy-" + client.getPort();
			this.threads = List.of(daemon(name + "-commands", this::forwardCommands),
					daemon(name + "-replies-in", this::readReplies), daemon(name + "-replies-out", this::writeReplies));
		}

		void start() {
			this.threads.forEach(Thread::start);
		}

		private void forwardCommands() {
			byte[] buffer = new byte[8192];
			try (InputStream in = this.client.getInputStream(); OutputStream out = this.upstream.getOutputStream()) {
				for (int read = in.read(buffer); read != -1; read = in.read(buffer)) {
					if (!awaitFlowing(this)) {
						return;
					}
					out.write(buffer, 0, read);
					out.flush();
				}
			}
			catch (IOException | InterruptedException ex) {
				// the connection is gone, one side or the other
			}
			finally {
				close();
			}
		}

		private void readReplies() {
			byte[] buffer = new byte[8192];
			try (InputStream in = this.upstream.getInputStream()) {
				for (int read = in.read(buffer); read != -1; read = in.read(buffer)) {
					long now = System.nanoTime();
					this.replies.add(new Chunk(Arrays.copyOf(buffer, read), now, now + replyDelayNanos()));
				}
			}
			catch (IOException ex) {
				// the connection is gone, one side or the other
			}
			finally {
				close();
			}
		}

		private void writeReplies() {
			try (OutputStream out = this.client.getOutputStream()) {
				while (!this.closed) {
					Chunk chunk = this.replies.poll(100, TimeUnit.MILLISECONDS);
					if (chunk == null) {
						continue;
					}
					while (waiting(chunk) && !this.closed) {
						// short naps, so that a resume releases the chunk at once
						TimeUnit.MILLISECONDS.sleep(1);
					}
					if (!awaitFlowing(this)) {
						return;
					}
					out.write(chunk.bytes);
					out.flush();
				}
			}
			catch (IOException | InterruptedException ex) {
				// the connection is gone, one side or the other
			}
			finally {
				close();
			}
		}

		void close() {
			if (this.closed) {
				return;
			}
			this.closed = true;
			DelayingProxy.this.connections.remove(this);
			closeQuietly(this.client);
			closeQuietly(this.upstream);
			synchronized (DelayingProxy.this.lock) {
				DelayingProxy.this.lock.notifyAll();
			}
		}

	}

}
