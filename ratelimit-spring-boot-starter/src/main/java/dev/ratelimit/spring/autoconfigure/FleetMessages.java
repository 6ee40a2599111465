package dev.ratelimit.spring.autoconfigure;

import java.nio.charset.StandardCharsets;

import dev.ratelimit.core.redis.RedisRateLimitStore;
import dev.ratelimit.spring.web.PolicyChanges;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.data.redis.connection.Message;
import org.springframework.data.redis.connection.MessageListener;

/**
 * Acts at once upon what the {@link RedisRateLimitStore#fleetChannel() fleet's channel} announces, rather than
 * at the next heartbeat: a reset anywhere in the fleet makes this instance forget the denials it keeps locally
 * for that key, and a shared change makes it read and apply the fleet's changes. The heartbeat still acts upon
 * both within about a second, so a message lost while the subscription was down costs that second, no more.
 */
final class FleetMessages implements MessageListener {

	static final String RESET = "reset:";

	static final String CHANGES = "changes";

	private final RedisRateLimitStore store;

	private final ObjectProvider<PolicyChanges> changes;

	FleetMessages(RedisRateLimitStore store, ObjectProvider<PolicyChanges> changes) {
		this.store = store;
		this.changes = changes;
	}

	@Override
	public void onMessage(Message message, byte[] pattern) {
		String body = new String(message.getBody(), StandardCharsets.UTF_8);
		if (body.startsWith(RESET)) {
			this.store.forget(body.substring(RESET.length()));
		}
		else if (body.equals(CHANGES)) {
			this.changes.ifAvailable(PolicyChanges::follow);
		}
	}

}
