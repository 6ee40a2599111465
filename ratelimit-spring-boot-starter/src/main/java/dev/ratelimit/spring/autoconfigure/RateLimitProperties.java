package dev.ratelimit.spring.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.FailurePolicy;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties of rate limiting, under {@code ratelimit}.
 */
@ConfigurationProperties("ratelimit")
public class RateLimitProperties {

	/**
	 * Whether to enable rate limiting.
	 */
	private boolean enabled = true;

	/**
	 * Store that keeps the state of every key. Unset, the store is jdbc when the application's DataSource is
	 * PostgreSQL's (spring.datasource.url starts with jdbc:postgresql:) and it has no Redis connection, else memory.
	 */
	private StoreType store = StoreType.MEMORY;

	/**
	 * Algorithm of the limits that do not name one.
	 */
	private Algorithm defaultAlgorithm = Algorithm.GCRA;

	/**
	 * Maximum number of keys that the in-memory store tracks under each policy. Beyond it, the policy's new
	 * keys share one quota until its idle keys are forgotten; other policies are not affected.
	 */
	private int maxKeys = 100_000;

	/**
	 * Share of a limit below which the permits a request leaves count as near the limit, in
	 * ratelimit.near.limit, greater than 0 and less than 1: 0.2 counts the requests that leave fewer than 20%
	 * of the limit.
	 */
	private double nearLimitShare = 0.2;

	/**
	 * How long the limits that the application's LimitResolver gives a client under a policy are kept before
	 * it is asked again.
	 */
	private Duration limitResolverTtl = Duration.ofMinutes(1);

	private final Redis redis = new Redis();

	private final Jdbc jdbc = new Jdbc();

	private final Health health = new Health();

	private final Headers headers = new Headers();

	private final ClientAddress clientAddress = new ClientAddress();

	/**
	 * Client networks exempt from every limit, in CIDR notation (10.0.0.0/8, 2001:db8::/32) or as single
	 * addresses: their requests are neither counted nor limited, and get no rate limit headers.
	 */
	private List<String> exempt = new ArrayList<>();

	/**
	 * Condition exempting a request from every limit: spel:<expression> over #request, #principal and #ip, or
	 * bean:<name> of a RateLimitExemption bean.
	 */
	private @Nullable String exemptIf;

	/**
	 * Limits of requests matched by path. A request whose handler carries no @RateLimited takes the limit of
	 * the first rule it matches.
	 */
	private List<Rule> rules = new ArrayList<>();

	/**
	 * Whether every policy runs in shadow mode: each request is decided and counted as if the limit were
	 * enforced, but none is rejected or held. A policy's own shadow setting wins over this one.
	 */
	private boolean shadow;

	/**
	 * Whether policies in shadow mode write their RateLimit-Policy and RateLimit response headers, as enforced
	 * ones do.
	 */
	private boolean shadowHeaders;

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public StoreType getStore() {
		return this.store;
	}

	public void setStore(StoreType store) {
		this.store = store;
	}

	public Algorithm getDefaultAlgorithm() {
		return this.defaultAlgorithm;
	}

	public void setDefaultAlgorithm(Algorithm defaultAlgorithm) {
		this.defaultAlgorithm = defaultAlgorithm;
	}

	public int getMaxKeys() {
		return this.maxKeys;
	}

	public void setMaxKeys(int maxKeys) {
		this.maxKeys = maxKeys;
	}

	public Duration getLimitResolverTtl() {
		return this.limitResolverTtl;
	}

	public void setLimitResolverTtl(Duration limitResolverTtl) {
		this.limitResolverTtl = limitResolverTtl;
	}

	public double getNearLimitShare() {
		return this.nearLimitShare;
	}

	public void setNearLimitShare(double nearLimitShare) {
		this.nearLimitShare = nearLimitShare;
	}

	public Redis getRedis() {
		return this.redis;
	}

	public Jdbc getJdbc() {
		return this.jdbc;
	}

	public Health getHealth() {
		return this.health;
	}

	public Headers getHeaders() {
		return this.headers;
	}

	public ClientAddress getClientAddress() {
		return this.clientAddress;
	}

	public List<String> getExempt() {
		return this.exempt;
	}

	public void setExempt(List<String> exempt) {
		this.exempt = exempt;
	}

	public @Nullable String getExemptIf() {
		return this.exemptIf;
	}

	public void setExemptIf(@Nullable String exemptIf) {
		this.exemptIf = exemptIf;
	}

	public List<Rule> getRules() {
		return this.rules;
	}

	public void setRules(List<Rule> rules) {
		this.rules = rules;
	}

	public boolean isShadow() {
		return this.shadow;
	}

	public void setShadow(boolean shadow) {
		this.shadow = shadow;
	}

	public boolean isShadowHeaders() {
		return this.shadowHeaders;
	}

	public void setShadowHeaders(boolean shadowHeaders) {
		this.shadowHeaders = shadowHeaders;
	}

	/**
	 * Where the state of every key is kept.
	 */
	public enum StoreType {

		/** In this JVM: exact for one instance, each instance of a fleet counting on its own. */
		MEMORY,

		/** In Redis, through the application's Spring Data Redis connection, shared by the whole fleet. */
		REDIS,

		/** In a PostgreSQL table, through the application's DataSource, shared by the whole fleet. */
		JDBC

	}

	/**
	 * Properties of the PostgreSQL store.
	 */
	public static class Jdbc {

		/**
		 * Table that keeps the state of every key, optionally after a schema name and a dot; also names the
		 * store's functions and index.
		 */
		private String tableName = "ratelimit_state";

		/**
		 * Prefix of every key that the store writes to the table, so that applications sharing the table keep
		 * their keys apart.
		 */
		private String keyPrefix = "";

		/**
		 * Whether to create the table, its index and its functions at startup where they are missing. Disable it
		 * when migrations create them from META-INF/ratelimit/sql/schema.sql.
		 */
		private boolean createSchema = true;

		/**
		 * How often to delete the rows of keys that are back to their full quota, a bounded batch at a time. Zero
		 * never deletes them.
		 */
		private Duration cleanupInterval = Duration.ofMinutes(1);

		/**
		 * How long a call may take, from asking the DataSource for a connection to the database's answer, before
		 * the failure policy decides its request: after three such calls in a row, the store declares an outage
		 * and every new request takes the failure policy without waiting, until the database answers again.
		 */
		private Duration timeout = Duration.ofMillis(500);

		/**
		 * What decides while the database fails or does not answer in time: an in-memory store of this instance
		 * within its share of each limit (local), or allowing (allow) or denying (deny) every request.
		 */
		private FailurePolicy failurePolicy = FailurePolicy.LOCAL;

		/**
		 * How long a request in flight holds its lease in the database unless the instance renews it, which it
		 * does every third of that while the request runs: the permits of an instance that dies return this long
		 * after its last renewal.
		 */
		private Duration inFlightLease = Duration.ofSeconds(30);

		public String getTableName() {
			return this.tableName;
		}

		public void setTableName(String tableName) {
			this.tableName = tableName;
		}

		public String getKeyPrefix() {
			return this.keyPrefix;
		}

		public void setKeyPrefix(String keyPrefix) {
			this.keyPrefix = keyPrefix;
		}

		public boolean isCreateSchema() {
			return this.createSchema;
		}

		public void setCreateSchema(boolean createSchema) {
			this.createSchema = createSchema;
		}

		public Duration getCleanupInterval() {
			return this.cleanupInterval;
		}

		public void setCleanupInterval(Duration cleanupInterval) {
			this.cleanupInterval = cleanupInterval;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public FailurePolicy getFailurePolicy() {
			return this.failurePolicy;
		}

		public void setFailurePolicy(FailurePolicy failurePolicy) {
			this.failurePolicy = failurePolicy;
		}

		public Duration getInFlightLease() {
			return this.inFlightLease;
		}

		public void setInFlightLease(Duration inFlightLease) {
			this.inFlightLease = inFlightLease;
		}

	}

	/**
	 * Properties of the Redis store.
	 */
	public static class Redis {

		/**
		 * Prefix of every key that the store writes to Redis.
		 */
		private String keyPrefix = "ratelimit:";

		/**
		 * How long Redis may take to answer before a call counts as a failure: after three such calls in a row,
		 * the store declares an outage and every new request takes the failure policy without waiting, until
		 * Redis answers again. A request whose call is under way still waits up to max-wait.
		 */
		private Duration timeout = Duration.ofMillis(100);

		/**
		 * How long a request in flight holds its lease in Redis unless the instance renews it, which it does
		 * every third of that time while the request runs: the permits in flight of an instance that dies return
		 * at most this long after its last renewal.
		 */
		private Duration inFlightLease = Duration.ofSeconds(30);

		/**
		 * Longest wait of a request for Redis' reply before the failure policy decides it instead, so that a
		 * Redis slow for a moment (a pause, a busy core, a cold client) costs time, not exactness. By default 500
		 * ms, or the timeout if longer. On Jedis, it bounds each wait of a call: for a connection, then for the
		 * reply.
		 */
		private @Nullable Duration maxWait;

		/**
		 * What decides while Redis fails or does not answer in time: an in-memory store of this instance
		 * (local), or allowing (allow) or denying (deny) every request.
		 */
		private FailurePolicy failurePolicy = FailurePolicy.LOCAL;

		/**
		 * Connections of the Jedis executor's pool, hence decisions in Redis at once; a decision that finds
		 * none free within max-wait falls to the failure policy. By default, the servlet container's most
		 * request threads (server.tomcat.threads.max or server.jetty.threads.max), or the application's Jedis
		 * pool size if larger.
		 */
		private @Nullable Integer poolSize;

		/**
		 * Whether this instance denies a request that Redis has just denied again without a call, until the
		 * retry-after Redis gave: a denied request takes nothing, so no decision changes, and a client hammering
		 * a key it has exhausted costs Redis nothing. At most 10,000 client keys hold such denials.
		 */
		private boolean localDenials = true;

		public String getKeyPrefix() {
			return this.keyPrefix;
		}

		public void setKeyPrefix(String keyPrefix) {
			this.keyPrefix = keyPrefix;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public Duration getInFlightLease() {
			return this.inFlightLease;
		}

		public void setInFlightLease(Duration inFlightLease) {
			this.inFlightLease = inFlightLease;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public @Nullable Duration getMaxWait() {
			return this.maxWait;
		}

		public void setMaxWait(@Nullable Duration maxWait) {
			this.maxWait = maxWait;
		}

		public FailurePolicy getFailurePolicy() {
			return this.failurePolicy;
		}

		public void setFailurePolicy(FailurePolicy failurePolicy) {
			this.failurePolicy = failurePolicy;
		}

		public @Nullable Integer getPoolSize() {
			return this.poolSize;
		}

		public void setPoolSize(@Nullable Integer poolSize) {
			this.poolSize = poolSize;
		}

		public boolean isLocalDenials() {
			return this.localDenials;
		}

		public void setLocalDenials(boolean localDenials) {
			this.localDenials = localDenials;
		}

	}

	/**
	 * Properties of the ratelimit health contributor.
	 */
	public static class Health {

		/**
		 * Whether the health contributor reports DOWN while Redis is failing and the failure policy decides
		 * every request, which takes the application out of service where health decides traffic. By default
		 * it stays UP, since the failure policy keeps deciding.
		 */
		private boolean downWhenFailing;

		public boolean isDownWhenFailing() {
			return this.downWhenFailing;
		}

		public void setDownWhenFailing(boolean downWhenFailing) {
			this.downWhenFailing = downWhenFailing;
		}

	}

	/**
	 * Properties of the response headers.
	 */
	public static class Headers {

		/**
		 * Whether to add the legacy X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset headers next
		 * to RateLimit-Policy and RateLimit.
		 */
		private boolean legacy;

		public boolean isLegacy() {
			return this.legacy;
		}

		public void setLegacy(boolean legacy) {
			this.legacy = legacy;
		}

	}

	/**
	 * Properties of the client address that the ip key and exemptions use.
	 */
	public static class ClientAddress {

		/**
		 * Proxies whose Forwarded or X-Forwarded-For header names the client, in CIDR notation or as single
		 * addresses. The client is the right-most address of the header that is not a trusted proxy. When empty,
		 * the socket peer is the client, whatever server.forward-headers-strategy makes of the request.
		 */
		private List<String> trustedProxies = new ArrayList<>();

		/**
		 * Number of leading bits of an IPv6 client address that identify a client, from 1 to 128: every address
		 * of one /64 network shares one quota by default.
		 */
		private int ipv6Prefix = 64;

		public List<String> getTrustedProxies() {
			return this.trustedProxies;
		}

		public void setTrustedProxies(List<String> trustedProxies) {
			this.trustedProxies = trustedProxies;
		}

		public int getIpv6Prefix() {
			return this.ipv6Prefix;
		}

		public void setIpv6Prefix(int ipv6Prefix) {
			this.ipv6Prefix = ipv6Prefix;
		}

	}

	/**
	 * The values of a limit. Under {@code ratelimit.policies.<name>} they replace those of the
	 * {@code @RateLimited} declaration of that name, and unset values keep the declaration's. The starter binds
	 * those overrides itself, so that a dotted name needs no brackets (see {@code PolicyOverrides}).
	 */
	public static class Policy {

		/**
		 * Permits per window.
		 */
		private @Nullable Long limit;

		/**
		 * Window of the limit: a whole number with ms, s, m, h or d (500ms, 10s, 1m), or ISO-8601 (PT10S), as
		 * in the annotation. A bare number is rejected.
		 */
		private @Nullable String window;

		/**
		 * Algorithm deciding each request.
		 */
		private @Nullable Algorithm algorithm;

		/**
		 * Capacity of the bucket algorithms and queue length of the leaky bucket.
		 */
		private @Nullable Long burst;

		/**
		 * Number of queued requests of a leaky bucket that pass at once instead of waiting for their slot, as
		 * nginx's delay=. Replaces, with no-delay, the declaration's delayAfter and noDelay.
		 */
		private @Nullable Long delayAfter;

		/**
		 * Whether the whole queue of a leaky bucket passes at once instead of waiting, as nginx's nodelay.
		 * Replaces, with delay-after, the declaration's delayAfter and noDelay.
		 */
		private @Nullable Boolean noDelay;

		/**
		 * Permits each request takes.
		 */
		private @Nullable Long cost;

		/**
		 * SpEL expression computing the permits each request takes, over the variables of a spel: key, instead
		 * of a constant cost.
		 */
		private @Nullable String costExpression;

		/**
		 * Limits per plan of the client, by plan name, replacing and adding to those of the declaration.
		 */
		private Map<String, Plan> plans = new LinkedHashMap<>();

		/**
		 * Key of the limit: ip, user, header:<name>, bean:<name> or spel:<expression>.
		 */
		private @Nullable String key;

		/**
		 * Number of leading bits of an IPv6 client address that identify a client under this limit, from 1 to
		 * 128. Defaults to ratelimit.client-address.ipv6-prefix.
		 */
		private @Nullable Integer ipv6Prefix;

		/**
		 * Client networks exempt from this limit, next to those of ratelimit.exempt.
		 */
		private List<String> exempt = new ArrayList<>();

		/**
		 * Condition exempting a request from this limit, next to ratelimit.exempt-if: spel:<expression> or
		 * bean:<name>.
		 */
		private @Nullable String exemptIf;

		/**
		 * Response statuses that count against the limit, such as 401 and 403 to limit failed logins; every
		 * response counts when empty. A request is still decided before it runs, and refused once the quota is
		 * spent; a response of another status gives its permits back.
		 */
		private List<Integer> countStatus = new ArrayList<>();

		/**
		 * Whether the limit runs in shadow mode: each request is decided and counted as if it were enforced, but
		 * none is rejected or held. Defaults to ratelimit.shadow, over which it wins.
		 */
		private @Nullable Boolean shadow;

		/**
		 * How long a client stays refused once the limit refused it, such as 60s, whatever its quota says
		 * meanwhile: Retry-After tells the rest. Replaces the declaration's penalty; none by default.
		 */
		private @Nullable String penalty;

		/**
		 * How many of a client's requests may be in flight at once under the limit, besides its rate: a request
		 * beyond them is refused with 429 and a Retry-After of one second. Replaces the declaration's; 0 for no
		 * such limit.
		 */
		private @Nullable Long concurrency;

		public @Nullable Long getLimit() {
			return this.limit;
		}

		public void setLimit(@Nullable Long limit) {
			this.limit = limit;
		}

		public @Nullable String getWindow() {
			return this.window;
		}

		public void setWindow(@Nullable String window) {
			this.window = window;
		}

		public @Nullable Algorithm getAlgorithm() {
			return this.algorithm;
		}

		public void setAlgorithm(@Nullable Algorithm algorithm) {
			this.algorithm = algorithm;
		}

		public @Nullable Long getBurst() {
			return this.burst;
		}

		public void setBurst(@Nullable Long burst) {
			this.burst = burst;
		}

		public @Nullable Long getDelayAfter() {
			return this.delayAfter;
		}

		public void setDelayAfter(@Nullable Long delayAfter) {
			this.delayAfter = delayAfter;
		}

		public @Nullable Boolean getNoDelay() {
			return this.noDelay;
		}

		public void setNoDelay(@Nullable Boolean noDelay) {
			this.noDelay = noDelay;
		}

		public @Nullable Long getCost() {
			return this.cost;
		}

		public void setCost(@Nullable Long cost) {
			this.cost = cost;
		}

		public @Nullable String getCostExpression() {
			return this.costExpression;
		}

		public void setCostExpression(@Nullable String costExpression) {
			this.costExpression = costExpression;
		}

		public Map<String, Plan> getPlans() {
			return this.plans;
		}

		public void setPlans(Map<String, Plan> plans) {
			this.plans = plans;
		}

		public @Nullable String getKey() {
			return this.key;
		}

		public void setKey(@Nullable String key) {
			this.key = key;
		}

		public @Nullable Integer getIpv6Prefix() {
			return this.ipv6Prefix;
		}

		public void setIpv6Prefix(@Nullable Integer ipv6Prefix) {
			this.ipv6Prefix = ipv6Prefix;
		}

		public List<String> getExempt() {
			return this.exempt;
		}

		public void setExempt(List<String> exempt) {
			this.exempt = exempt;
		}

		public @Nullable String getExemptIf() {
			return this.exemptIf;
		}

		public void setExemptIf(@Nullable String exemptIf) {
			this.exemptIf = exemptIf;
		}

		public List<Integer> getCountStatus() {
			return this.countStatus;
		}

		public void setCountStatus(List<Integer> countStatus) {
			this.countStatus = countStatus;
		}

		public @Nullable Boolean getShadow() {
			return this.shadow;
		}

		public void setShadow(@Nullable Boolean shadow) {
			this.shadow = shadow;
		}

		public @Nullable Long getConcurrency() {
			return this.concurrency;
		}

		public void setConcurrency(@Nullable Long concurrency) {
			this.concurrency = concurrency;
		}

		public @Nullable String getPenalty() {
			return this.penalty;
		}

		public void setPenalty(@Nullable String penalty) {
			this.penalty = penalty;
		}

	}

	/**
	 * The limits of one plan of a policy. Unset values keep those of the declaration's plan of that name, else
	 * the policy's limit and window and a burst of the plan's limit.
	 */
	public static class Plan {

		/**
		 * Permits per window on this plan.
		 */
		private @Nullable Long limit;

		/**
		 * Window of the limit on this plan, as the policy's window is written.
		 */
		private @Nullable String window;

		/**
		 * Capacity of the bucket algorithms and queue length of the leaky bucket on this plan.
		 */
		private @Nullable Long burst;

		public @Nullable Long getLimit() {
			return this.limit;
		}

		public void setLimit(@Nullable Long limit) {
			this.limit = limit;
		}

		public @Nullable String getWindow() {
			return this.window;
		}

		public void setWindow(@Nullable String window) {
			this.window = window;
		}

		public @Nullable Long getBurst() {
			return this.burst;
		}

		public void setBurst(@Nullable Long burst) {
			this.burst = burst;
		}

	}

	/**
	 * A limit applied to the requests matching a path pattern. Unset values take the defaults of a
	 * {@code @RateLimited} declaration: the default algorithm, a burst of the limit, a cost of 1, the ip key.
	 */
	public static class Rule extends Policy {

		/**
		 * Path pattern of the requests to limit, such as /api/** or /api/{tenant}/**, relative to the context
		 * path.
		 */
		private @Nullable String path;

		/**
		 * HTTP methods of the requests to limit. All methods when empty.
		 */
		private List<String> methods = new ArrayList<>();

		/**
		 * Name of the policy in headers and metrics. Defaults to "rule-" and the rule's index.
		 */
		private @Nullable String name;

		/**
		 * Whether the rule is decided in a servlet filter ordered before Spring Security's filter chain, so that
		 * it limits what Spring Security answers itself, such as /login or a wrong HTTP Basic password. It then
		 * applies to every request it matches, whatever the handler declares, and no user is known yet.
		 */
		private boolean beforeSecurity;

		public @Nullable String getPath() {
			return this.path;
		}

		public void setPath(@Nullable String path) {
			this.path = path;
		}

		public List<String> getMethods() {
			return this.methods;
		}

		public void setMethods(List<String> methods) {
			this.methods = methods;
		}

		public @Nullable String getName() {
			return this.name;
		}

		public void setName(@Nullable String name) {
			this.name = name;
		}

		public boolean isBeforeSecurity() {
			return this.beforeSecurity;
		}

		public void setBeforeSecurity(boolean beforeSecurity) {
			this.beforeSecurity = beforeSecurity;
		}

	}

}
