package dev.ratelimit.sample;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.stereotype.Component;

/**
 * The customers' records, standing for the application's database: each customer's quota, which the
 * application may change while it runs, as a billing system would.
 */
@Component
public class CustomerRecords {

	private final Map<String, Quota> quotas = new ConcurrentHashMap<>(
			Map.of("alice", new Quota(5, Duration.ofSeconds(10)), "bob", new Quota(2, Duration.ofSeconds(10))));

	/**
	 * Returns the quota of a customer.
	 * @param customer the customer's user name
	 * @return the quota, empty for a customer without a record
	 */
	public Optional<Quota> quota(String customer) {
		return Optional.ofNullable(this.quotas.get(customer));
	}

	/**
	 * Gives a customer another quota.
	 * @param customer the customer's user name
	 * @param quota the new quota
	 */
	public void update(String customer, Quota quota) {
		this.quotas.put(customer, quota);
	}

	/**
	 * A customer's quota.
	 *
	 * @param limit requests per window
	 * @param window the window
	 */
	public record Quota(long limit, Duration window) {
	}

}
