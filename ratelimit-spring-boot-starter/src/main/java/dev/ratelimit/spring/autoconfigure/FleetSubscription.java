package dev.ratelimit.spring.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;

import dev.ratelimit.core.redis.RedisRateLimitStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.MessageListener;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.Subscription;

/**
 * The subscription of the Redis store to its {@link RedisRateLimitStore#fleetChannel() fleet's channel}, so that a
 * reset or a runtime change made on another instance applies here at once rather than at the next heartbeat: each
 * message goes to {@link RedisRateLimitStore#receive}, on a thread of its own, since acting upon a change reads it
 * from Redis, which the client's I/O thread that delivered the message could not answer meanwhile. It subscribes on
 * a thread of its own, on a connection of the application's connection factory: a Redis that is down when the
 * application starts delays it, and never fails the start, since the heartbeat acts upon resets and changes within
 * about a second anyway, so a message lost while the subscription was down costs that second.
 * <p>
 * On Lettuce the subscription returns at once and the client keeps it, subscribing again after each reconnection. On
 * Jedis it holds the thread until the connection breaks; the thread then subscribes again every {@link #RETRY} until
 * Redis answers. Either way, a subscription that cannot be made is logged at most once a {@link #LOG_PERIOD}, without
 * a stack trace: Redis failing is the store's to report, once a minute with one.
 */
final class FleetSubscription implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(FleetSubscription.class);

	static final Duration RETRY = Duration.ofSeconds(1);

	static final Duration LOG_PERIOD = Duration.ofMinutes(1);

	private final RedisConnectionFactory connectionFactory;

	private final RedisRateLimitStore store;

	private final MessageListener listener;

	/**
	 * Where messages are acted upon: never the client's I/O thread that delivers them, since a change is read from
	 * Redis, on that very client.
	 */
	private final ExecutorService messages = Executors.newSingleThreadExecutor((task) -> {
		Thread thread = new Thread(task, "ratelimit-fleet-messages");
		thread.setDaemon(true);
		return thread;
	});

	private volatile boolean running;

	/** What the subscriber waits on between attempts, and what guards the connection. */
	private final Object lock = new Object();

	/** The connection subscribed or subscribing, which stopping closes. */
	private @Nullable RedisConnection connection;

	/** When a failure was last logged, in {@link System#nanoTime()}; none yet while {@code logged} is false. */
	private long lastLogged;

	private boolean logged;

	FleetSubscription(RedisConnectionFactory connectionFactory, RedisRateLimitStore store) {
		this.connectionFactory = connectionFactory;
		this.store = store;
		this.listener = (message, pattern) -> {
			String text = new String(message.getBody(), StandardCharsets.UTF_8);
			try {
				this.messages.execute(() -> store.receive(text));
			}
			catch (RejectedExecutionException ex) {
				// stopped: the heartbeat acts upon what is left
			}
		};
	}

	@Override
	public void start() {
		this.running = true;
		Thread subscriber = new Thread(this::subscribe, "ratelimit-fleet-subscription");
		subscriber.setDaemon(true);
		subscriber.start();
	}

	private void subscribe() {
		byte[] channel = this.store.fleetChannel().getBytes(StandardCharsets.UTF_8);
		while (this.running) {
			RedisConnection connection = null;
			try {
				connection = this.connectionFactory.getConnection();
				synchronized (this.lock) {
					if (!this.running) {
						close(connection);
						return;
					}
					this.connection = connection;
				}
				connection.subscribe(this.listener, channel);
				synchronized (this.lock) {
					if (!this.running) {
						// stopped while subscribing: what the subscription opened is closed here
						close(connection);
						return;
					}
				}
				if (connection.isSubscribed()) {
					// the client holds the subscription, and keeps it through reconnections
					return;
				}
			}
			catch (RuntimeException ex) {
				failed(ex);
			}
			if (connection != null) {
				release(connection);
			}
			synchronized (this.lock) {
				try {
					if (this.running) {
						this.lock.wait(RETRY.toMillis());
					}
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return;
				}
			}
		}
	}

	/** A subscription that could not be made, or ended as its connection broke: logged once a period. */
	private void failed(RuntimeException ex) {
		if (!this.running) {
			// stopped while subscribing: the failure is the closing connection's
			return;
		}
		long now = System.nanoTime();
		if (!this.logged || now - this.lastLogged >= LOG_PERIOD.toNanos()) {
			this.logged = true;
			this.lastLogged = now;
			logger.warn("The rate limiting fleet's channel is not subscribed to (" + ex + "); trying again every "
					+ RETRY.toSeconds() + " s, while each heartbeat applies resets and changes made elsewhere within "
					+ "about a second");
		}
	}

	private void release(RedisConnection connection) {
		synchronized (this.lock) {
			if (this.connection == connection) {
				this.connection = null;
			}
		}
		close(connection);
	}

	@Override
	public void stop() {
		RedisConnection connection;
		synchronized (this.lock) {
			this.running = false;
			// never an interrupt: one that came while subscribing would fail it with a stack trace
			this.lock.notifyAll();
			connection = this.connection;
			this.connection = null;
		}
		if (connection != null) {
			close(connection);
		}
		this.messages.shutdown();
	}

	private static void close(RedisConnection connection) {
		try {
			Subscription subscription = connection.getSubscription();
			if (subscription != null && subscription.isAlive()) {
				subscription.close();
			}
		}
		catch (RuntimeException ex) {
			// a subscription whose connection broke
		}
		try {
			connection.close();
		}
		catch (RuntimeException ex) {
			// closing what broke
		}
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

}
