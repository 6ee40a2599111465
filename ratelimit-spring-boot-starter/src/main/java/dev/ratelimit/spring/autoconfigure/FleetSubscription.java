package dev.ratelimit.spring.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import dev.ratelimit.core.redis.RedisRateLimitStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

/**
 * The subscription of the Redis store to its {@link RedisRateLimitStore#fleetChannel() fleet's channel}, so that a
 * reset or a runtime change made on another instance applies here at once rather than at the next heartbeat: each
 * message goes to {@link RedisRateLimitStore#receive}. It is opened off the starting thread: a Redis that is down when
 * the application starts delays it, and never fails the start, since the heartbeat acts upon resets and changes within
 * about a second anyway, so a message lost while the subscription was down costs that second. Until a subscription
 * succeeds, one is tried every {@link #RETRY}; once open, Spring Data Redis keeps it open.
 */
final class FleetSubscription implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(FleetSubscription.class);

	static final Duration RETRY = Duration.ofSeconds(5);

	private final RedisConnectionFactory connectionFactory;

	private final RedisRateLimitStore store;

	private volatile boolean running;

	/** What the opener waits on between attempts, so that stopping wakes it without interrupting a call. */
	private final Object pause = new Object();

	private volatile @Nullable RedisMessageListenerContainer container;

	FleetSubscription(RedisConnectionFactory connectionFactory, RedisRateLimitStore store) {
		this.connectionFactory = connectionFactory;
		this.store = store;
	}

	@Override
	public void start() {
		this.running = true;
		Thread opener = new Thread(this::open, "ratelimit-fleet-subscription");
		opener.setDaemon(true);
		opener.start();
	}

	private void open() {
		boolean warned = false;
		while (this.running) {
			RedisMessageListenerContainer container = new RedisMessageListenerContainer();
			container.setConnectionFactory(this.connectionFactory);
			container.addMessageListener(
					(message, pattern) -> this.store.receive(new String(message.getBody(), StandardCharsets.UTF_8)),
					new ChannelTopic(this.store.fleetChannel()));
			try {
				container.afterPropertiesSet();
				container.start();
				this.container = container;
				if (!this.running) {
					close(container);
				}
				return;
			}
			catch (RuntimeException ex) {
				close(container);
				if (!this.running) {
					// stopped while opening: the failure is the closing connection's
					return;
				}
				if (!warned) {
					warned = true;
					logger.warn("Could not subscribe to the rate limiting fleet's channel (" + ex.getMessage()
							+ "); trying again every " + RETRY.toSeconds() + " s, while each heartbeat applies resets "
							+ "and changes made elsewhere within about a second");
				}
			}
			try {
				synchronized (this.pause) {
					if (this.running) {
						this.pause.wait(RETRY.toMillis());
					}
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

	@Override
	public void stop() {
		this.running = false;
		// never an interrupt: one that came while Spring Data Redis subscribes would fail it with a stack trace
		synchronized (this.pause) {
			this.pause.notifyAll();
		}
		RedisMessageListenerContainer container = this.container;
		if (container != null) {
			close(container);
		}
	}

	private static void close(RedisMessageListenerContainer container) {
		try {
			container.stop();
			container.destroy();
		}
		catch (Exception ex) {
			// closing what never opened
		}
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

}
