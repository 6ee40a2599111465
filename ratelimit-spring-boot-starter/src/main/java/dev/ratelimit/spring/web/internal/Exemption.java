package dev.ratelimit.spring.web.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.expression.Expression;

/**
 * When the requests of one endpoint are exempt from its limits: when the client address (past the trusted
 * proxies) is in one of the exempt networks, or a condition holds. A condition that fails, or whose SpEL value
 * is no boolean, exempts nothing: the request is limited, and the first failure of each condition is logged.
 */
public final class Exemption {

	private static final Log logger = LogFactory.getLog(RequestDecisions.class);

	private final ClientAddresses addresses;

	private final Networks networks;

	private final List<Condition> conditions;

	private Exemption(ClientAddresses addresses, Networks networks, List<Condition> conditions) {
		this.addresses = addresses;
		this.networks = networks;
		this.conditions = conditions;
	}

	/** Exempts nothing. */
	static Exemption none(ClientAddresses addresses) {
		return new Exemption(addresses, Networks.NONE, List.of());
	}

	/** Returns this exemption with {@code networks} exempt too. */
	Exemption orIn(Networks networks) {
		return new Exemption(this.addresses, this.networks.and(networks), this.conditions);
	}

	/** Returns this exemption with requests for which the SpEL {@code expression} is true exempt too. */
	Exemption orIf(String spec, Expression expression, AddressKey address) {
		boolean readsIp = KeySource.readsIp(expression);
		return or(new Condition(spec, (request) -> Boolean.TRUE
			.equals(expression.getValue(KeySource.requestContext(readsIp, request, address), Boolean.class))));
	}

	/** Returns this exemption with the requests that {@code exemption} exempts exempt too. */
	Exemption orIf(String spec, Predicate<LimitedRequest> exemption) {
		return or(new Condition(spec, exemption));
	}

	private Exemption or(Condition condition) {
		List<Condition> conditions = new ArrayList<>(this.conditions);
		conditions.add(condition);
		return new Exemption(this.addresses, this.networks, List.copyOf(conditions));
	}

	/** Returns whether the condition of any exemption may read an expression's variable. */
	boolean mayRead(String variable) {
		return this.conditions.stream().anyMatch((condition) -> KeySource.mayRead(condition.spec(), variable));
	}

	/** Returns whether {@code request} is exempt; a method call never is, having no address nor headers. */
	boolean applies(LimitedRequest request) {
		if (request instanceof MethodCall) {
			return false;
		}
		if (!this.networks.isEmpty()) {
			IpAddress client = this.addresses.address(request);
			if (client != null && this.networks.contains(client)) {
				return true;
			}
		}
		for (Condition condition : this.conditions) {
			if (condition.holds(request)) {
				return true;
			}
		}
		return false;
	}

	private record Condition(String spec, Predicate<LimitedRequest> test, AtomicBoolean warned) {

		Condition(String spec, Predicate<LimitedRequest> test) {
			this(spec, test, new AtomicBoolean());
		}

		boolean holds(LimitedRequest request) {
			try {
				return this.test.test(request);
			}
			catch (RuntimeException ex) {
				if (this.warned.compareAndSet(false, true) && logger.isWarnEnabled()) {
					logger.warn("Could not evaluate the exemption '" + this.spec + "' for " + request.describe() + " ("
							+ ex + "): the request is limited. Further failures of "
							+ "this exemption are not logged.");
				}
				return false;
			}
		}

	}

}
