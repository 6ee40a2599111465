-- Replaces the product's ${table}_lock for the partitioned experiment (see partitioned-table.sql): each (key,
-- policy) pair is serialized on a transaction-scoped advisory lock of its hash, taken in the order of the hashes so
-- that two decisions never wait for each other in a cycle, and its row is then read, or created where `creates`
-- says so, under that lock. Same arguments and result as the product's function.
CREATE OR REPLACE FUNCTION ${table}_lock(keys text[], policies text[], creates boolean[])
RETURNS ${table}[]
LANGUAGE plpgsql AS $$
DECLARE
	locked ${table}[] := array_fill(NULL::${table}, ARRAY[array_length(keys, 1)]);
	pair record;
	found_row ${table};
BEGIN
	PERFORM pg_advisory_xact_lock(h) FROM (SELECT DISTINCT hashtextextended(u.k || E'\x1f' || u.p, 0) AS h
		FROM unnest(keys, policies) AS u(k, p) ORDER BY 1) AS hashes;
	FOR pair IN SELECT u.k, u.p, u.c, u.n FROM unnest(keys, policies, creates) WITH ORDINALITY AS u(k, p, c, n) LOOP
		SELECT * INTO found_row FROM ${table} t WHERE t.key = pair.k AND t.policy = pair.p;
		IF NOT FOUND AND pair.c THEN
			-- expires_at 0 lands in no partition: the row starts at the decision's instant, which its write moves on
			INSERT INTO ${table} (key, policy, expires_at) VALUES (pair.k, pair.p, ${table}_now(NULL))
				RETURNING * INTO found_row;
		END IF;
		IF found_row.key IS NOT NULL THEN
			locked[pair.n] := found_row;
		END IF;
		found_row := NULL;
	END LOOP;
	RETURN locked;
END
$$;
