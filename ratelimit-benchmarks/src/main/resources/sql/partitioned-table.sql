-- An experiment, not the product's schema: the store's table range-partitioned by expires_at, the instant at which a
-- row's key is back to its full quota, so that idle rows go by dropping whole partitions instead of deleting rows.
-- ${table} is the table's name. IdleRows creates the partitions ahead of time and drops those whose range has
-- passed; the store's own schema.sql then adds its index and functions, and partitioned-lock.sql replaces ${table}_lock.
--
-- A unique index of a partitioned table must include the partition key, so (key, policy) cannot be unique here:
-- the product's _lock relies on that uniqueness (INSERT ... ON CONFLICT DO NOTHING), which is why the experiment
-- serializes each (key, policy) on an advisory lock instead. A decision that changes expires_at moves its row to
-- another partition (a DELETE and an INSERT), which the advisory lock also keeps other decisions from racing.
CREATE TABLE ${table} (
	key text COLLATE "C" NOT NULL,
	policy text COLLATE "C" NOT NULL,
	algorithm text,
	instant bigint,
	ticks bigint,
	counts bigint[],
	reserved boolean,
	penalty_until bigint,
	expires_at bigint NOT NULL
) PARTITION BY RANGE (expires_at);

-- not unique: see above; found by every decision in each partition, none of which its expires_at can prune
CREATE INDEX ${table}_key ON ${table} (key, policy);
