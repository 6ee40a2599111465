-- The schema of JdbcRateLimitStore on PostgreSQL (14 or later): one table of states and the functions that
-- decide on it. ${table} is the only placeholder: the table's name, optionally schema-qualified; the functions
-- and the index are named after it. The store runs this file itself unless told not to, under an advisory
-- lock; to own the schema with Flyway or Liquibase instead, copy it into a migration with the name replaced.
--
-- Each decision is one call of ${table}_decide, one statement in one transaction: it locks the rows of the
-- request's keys in a fixed order (key, then policy), so that stacks on overlapping keys cannot deadlock, and
-- decides under those locks, which makes it correct under READ COMMITTED (under REPEATABLE READ and SERIALIZABLE,
-- a decision on a row another one changed meanwhile fails). The algorithms are those of the Redis scripts
-- (src/main/lua), on the same integer arithmetic: times in microseconds, the bucket algorithms' instants in ticks
-- of 1 / scale microsecond, scale = limit / gcd(window, limit).

CREATE TABLE IF NOT EXISTS ${table} (
	-- the client's key, after the store's key prefix
	key text COLLATE "C" NOT NULL,
	-- the name of the policy's state: its name, or for a policy a runtime change made, its name and values
	policy text COLLATE "C" NOT NULL,
	-- the algorithm whose state the row holds, null for none (a row locked before its first state)
	algorithm text,
	-- the window index (fixed window, sliding window counter), or the instant in microseconds (buckets)
	instant bigint,
	-- a bucket's instant past its whole microseconds, in ticks
	ticks bigint,
	-- the count (fixed window), the previous and current counts (sliding window counter), or the times of the
	-- permits in the window, oldest first (sliding log)
	counts bigint[],
	-- whether a bucket's instant holds reservations: permits taken past the burst by requests that wait
	reserved boolean,
	-- until when, in microseconds, a policy with a penalty refuses the client
	penalty_until bigint,
	-- when, in microseconds on the store's clock, the row is back to a full quota and may be deleted
	expires_at bigint NOT NULL,
	PRIMARY KEY (key, policy)
);

DO $index$
DECLARE
	name text[] := parse_ident('${table}');
BEGIN
	EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON ${table} (expires_at)',
		name[array_upper(name, 1)] || '_expires_at');
END
$index$;

-- floor(a / b), exactly. Not STRICT, nor is ceil below, so that PostgreSQL inlines them into the expressions that
-- call them rather than running a query per call: a null argument still gives null.
CREATE OR REPLACE FUNCTION ${table}_fdiv(a numeric, b numeric) RETURNS numeric
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN mod(a, b) <> 0 AND (a < 0) <> (b < 0) THEN div(a, b) - 1 ELSE div(a, b) END
$$;

-- ceil(a / b), exactly
CREATE OR REPLACE FUNCTION ${table}_cdiv(a numeric, b numeric) RETURNS numeric
LANGUAGE sql IMMUTABLE AS $$
	SELECT -${table}_fdiv(-a, b)
$$;

-- A duration in ticks as whole microseconds rounded up, and the nanoseconds that rounding added.
CREATE OR REPLACE FUNCTION ${table}_micros(ticks numeric, scale numeric, OUT us bigint, OUT ns bigint)
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
BEGIN
	IF ticks <= 0 THEN
		us := 0;
		ns := 0;
	ELSIF scale = 1 THEN
		us := ticks;
		ns := 0;
	ELSE
		us := ${table}_cdiv(ticks, scale);
		ns := ${table}_fdiv((us * scale - ticks) * 1000, scale);
	END IF;
END
$$;

-- The window of `now`: its index, how long until the next one starts, and its start. Windows are aligned to
-- multiples of `win` since the clock's zero, or are the periods of a calendar window, `cal`: the number of the
-- period that starts at cal[2], then the boundaries of that period and of those after it.
CREATE OR REPLACE FUNCTION ${table}_window(now_us bigint, win bigint, cal bigint[],
	OUT idx bigint, OUT until_next bigint, OUT start bigint)
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	IF cal IS NULL THEN
		idx := ${table}_fdiv(now_us, win);
		until_next := (idx + 1) * win - now_us;
		start := idx * win;
		RETURN;
	END IF;
	FOR i IN 3 .. array_upper(cal, 1) LOOP
		IF now_us < cal[i] THEN
			IF now_us >= cal[i - 1] THEN
				idx := cal[1] + i - 3;
				until_next := cal[i] - now_us;
				start := cal[i - 1];
				RETURN;
			END IF;
			EXIT;
		END IF;
	END LOOP;
	RAISE EXCEPTION 'CALENDAR the instant % is in none of the periods from % to %', now_us, cal[2],
		cal[array_upper(cal, 1)];
END
$$;

-- Writes a bucket's instant `ahead` ticks after now, marked if it holds reservations.
CREATE OR REPLACE FUNCTION ${table}_save_ahead(INOUT s ${table}, now_us bigint, ahead numeric, scale numeric,
	reserved boolean)
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
	whole numeric := ${table}_fdiv(ahead, scale);
BEGIN
	s.instant := now_us + whole;
	s.ticks := ahead - whole * scale;
	s.reserved := reserved;
	s.counts := NULL;
	s.expires_at := s.instant + CASE WHEN s.ticks > 0 THEN 1 ELSE 0 END;
END
$$;

-- One policy's decision on one row, as the Redis script of its algorithm makes it. With `stack` null, only
-- whether the policy admits the request; otherwise the row as the request leaves it, taking the cost if `stack`
-- (the whole stack is allowed), whether the row changed, and the reply: allowed (1/0), remaining, retry-after,
-- reset-after, delay (microseconds, rounded up), the nanoseconds the rounding up added to each of the three
-- times, and the instant of the decision. Another algorithm's state reads as none and is overwritten.
CREATE OR REPLACE FUNCTION ${table}_step(INOUT s ${table}, alg text, lim bigint, win bigint, cal bigint[],
	burst bigint, cost bigint, shaping bigint, now_us bigint, stack boolean,
	OUT admitted boolean, OUT dirty boolean, OUT reply bigint[])
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
	mine boolean := s.algorithm IS NOT DISTINCT FROM alg;
	allowed boolean := coalesce(stack, false);
	w record;
	age numeric;
	used numeric := 0;
	prev numeric := 0;
	cur numeric := 0;
	elapsed numeric;
	headroom numeric;
	threshold numeric;
	at_ numeric;
	size integer := 0;
	expired integer := 0;
	len integer;
	must_expire integer;
	g numeric;
	scale numeric;
	interval_ numeric;
	ahead numeric := 0;
	most numeric;
	cap numeric;
	reserved boolean := false;
	wait_ numeric;
	queued numeric;
	remaining numeric;
	retry_ numeric := 0;
	reset_ numeric := 0;
	m record;
	retry_ns bigint := 0;
	reset_ns bigint := 0;
	delay bigint := 0;
	delay_ns bigint := 0;
BEGIN
	dirty := false;
	IF alg = 'FIXED_WINDOW' THEN
		w := ${table}_window(now_us, win, cal);
		IF mine THEN
			age := w.idx - s.instant;
			IF age <= 0 THEN
				-- capped in case a larger policy of the same name wrote it
				used := least(s.counts[1], lim);
				-- a window after this one, which no clock running forward writes: kept for the rest of this one
				dirty := age < 0;
			END IF;
		END IF;
		admitted := used + cost <= lim;
		IF allowed THEN
			used := used + cost;
			dirty := true;
		END IF;
		IF dirty THEN
			s.algorithm := alg;
			s.instant := w.idx;
			s.counts := ARRAY[used];
			s.expires_at := now_us + w.until_next;
		END IF;
		-- a request that fits but was refused by a stacked policy has nothing to wait for here
		IF NOT allowed AND NOT admitted THEN
			retry_ := w.until_next;
		END IF;
		IF used > 0 THEN
			reset_ := w.until_next;
		END IF;
		remaining := lim - used;
	ELSIF alg = 'SLIDING_LOG' THEN
		IF mine THEN
			len := coalesce(array_length(s.counts, 1), 0);
			IF len > 0 AND s.counts[len] > now_us THEN
				-- entries after now, which no clock running forward writes: moved to now
				s.counts := ARRAY(SELECT least(t, now_us) FROM unnest(s.counts) WITH ORDINALITY AS u(t, n) ORDER BY n);
				s.expires_at := now_us + win;
				dirty := true;
			END IF;
			SELECT count(*) INTO expired FROM unnest(s.counts) AS t WHERE t <= now_us - win;
			size := len - expired;
		END IF;
		admitted := size + cost <= lim;
		IF allowed THEN
			s.counts := coalesce(CASE WHEN mine THEN s.counts[expired + 1 : len] END, '{}'::bigint[])
				|| array_fill(now_us, ARRAY[cost::integer]);
			s.algorithm := alg;
			s.instant := NULL;
			s.expires_at := now_us + win;
			expired := 0;
			size := size + cost;
			dirty := true;
		END IF;
		-- the request fits once enough of the oldest entries have left the window
		must_expire := size + cost - lim;
		IF NOT allowed AND must_expire > 0 THEN
			retry_ := s.counts[expired + must_expire] + win - now_us;
		END IF;
		IF allowed THEN
			reset_ := win;
		ELSIF size > 0 THEN
			reset_ := s.counts[expired + size] + win - now_us;
		END IF;
		remaining := lim - size;
	ELSIF alg = 'SLIDING_WINDOW_COUNTER' THEN
		w := ${table}_window(now_us, win, NULL);
		elapsed := now_us - w.start;
		IF mine THEN
			age := w.idx - s.instant;
			IF age = 0 THEN
				prev := least(s.counts[1], lim);
				cur := least(s.counts[2], lim);
			ELSIF age = 1 THEN
				prev := least(s.counts[2], lim);
			ELSIF age < 0 THEN
				-- a window after this one: taken as the previous one, which fades out within this one
				prev := least(s.counts[2], lim);
				dirty := true;
			END IF;
		END IF;
		-- previous x (1 - elapsed / window) + current < limit - cost + 1, multiplied by the window
		admitted := prev * (win - elapsed) < (lim - cost + 1 - cur) * win;
		IF allowed THEN
			cur := cur + cost;
			dirty := true;
		END IF;
		IF cur > 0 THEN
			reset_ := 2 * win - elapsed;
		ELSIF prev > 0 THEN
			reset_ := win - elapsed;
		END IF;
		IF dirty THEN
			s.algorithm := alg;
			s.instant := w.idx;
			s.counts := ARRAY[prev, cur];
			s.expires_at := now_us + reset_;
		END IF;
		headroom := (lim - cur) * win - prev * (win - elapsed);
		remaining := CASE WHEN headroom > 0 THEN ${table}_cdiv(headroom, win) ELSE 0 END;
		IF NOT allowed AND NOT admitted THEN
			-- the first microsecond at which the request fits: later in this window as the previous one fades,
			-- or in the next, once the current count has become the previous one
			threshold := lim - cost + 1;
			headroom := threshold - cur;
			retry_ := NULL;
			IF headroom > 0 AND prev > 0 THEN
				at_ := win - ${table}_cdiv(headroom * win, prev) + 1;
				IF at_ < win THEN
					retry_ := at_ - elapsed;
				END IF;
			END IF;
			IF retry_ IS NULL THEN
				IF cur < threshold THEN
					retry_ := win - elapsed;
				ELSE
					retry_ := 2 * win - elapsed - ${table}_cdiv(threshold * win, cur) + 1;
				END IF;
			END IF;
		END IF;
	ELSIF alg IN ('TOKEN_BUCKET', 'GCRA', 'LEAKY_BUCKET') THEN
		g := gcd(win, lim);
		scale := lim / g;
		interval_ := win / g;
		-- a full leaky bucket's instant is (burst + 1) intervals ahead, an empty token bucket's burst intervals
		most := CASE WHEN alg = 'LEAKY_BUCKET' THEN burst + 1 ELSE burst END;
		IF mine AND s.instant >= now_us THEN
			reserved := s.reserved;
			-- a window more while it holds reservations
			cap := (most + CASE WHEN reserved THEN lim ELSE 0 END) * interval_;
			ahead := (s.instant - now_us) * scale + s.ticks;
			IF ahead > cap THEN
				-- no clock running forward puts the instant there: capped and written back at once
				ahead := cap;
				s := ${table}_save_ahead(s, now_us, ahead, scale, reserved);
				dirty := true;
			END IF;
		END IF;
		IF alg = 'LEAKY_BUCKET' THEN
			queued := CASE WHEN ahead <= 0 THEN 0 ELSE ${table}_cdiv(ahead, interval_) - 1 END;
			admitted := queued + cost <= burst;
		ELSE
			-- a request that may wait, `shaping` microseconds at most, reserves its permits past the burst
			wait_ := shaping * scale;
			admitted := ahead <= (burst - cost) * interval_ + wait_;
		END IF;
		IF allowed THEN
			ahead := ahead + cost * interval_;
			s.algorithm := alg;
			s := ${table}_save_ahead(s, now_us, ahead, scale, ahead > most * interval_);
			dirty := true;
		END IF;
		IF alg = 'LEAKY_BUCKET' THEN
			queued := CASE WHEN ahead <= 0 THEN 0 ELSE ${table}_cdiv(ahead, interval_) - 1 END;
			remaining := greatest(burst - queued, 0);
			IF allowed THEN
				-- this request's slot starts where it found next free; the first `shaping` slots are not waited for
				m := ${table}_micros(ahead - cost * interval_ - shaping * interval_, scale);
				delay := m.us;
				delay_ns := m.ns;
			ELSE
				m := ${table}_micros(ahead - (burst - cost + 1) * interval_, scale);
				retry_ := m.us;
				retry_ns := m.ns;
			END IF;
		ELSE
			remaining := greatest(${table}_fdiv(burst * interval_ - ahead, interval_), 0);
			IF allowed THEN
				-- a reservation goes ahead once the instant it found, cost intervals back, is within the burst again
				m := ${table}_micros(ahead - burst * interval_, scale);
				delay := m.us;
				delay_ns := m.ns;
			ELSE
				m := ${table}_micros(ahead - (burst - cost) * interval_ - wait_, scale);
				retry_ := m.us;
				retry_ns := m.ns;
			END IF;
		END IF;
		m := ${table}_micros(ahead, scale);
		reset_ := m.us;
		reset_ns := m.ns;
	ELSE
		RAISE EXCEPTION 'no algorithm is named "%"', alg;
	END IF;
	reply := ARRAY[CASE WHEN allowed THEN 1 ELSE 0 END, remaining, retry_, reset_, delay, retry_ns, reset_ns,
		delay_ns, now_us]::bigint[];
END
$$;

-- The instant of a decision in microseconds: the caller's, or the database's clock when it sends none.
CREATE OR REPLACE FUNCTION ${table}_now(given bigint) RETURNS bigint
LANGUAGE sql VOLATILE AS $$
	SELECT coalesce(given, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint)
$$;

-- Fails, loudly, a call in a transaction whose isolation is not READ COMMITTED: under REPEATABLE READ or
-- SERIALIZABLE a statement reads the rows as they were when it began, before the locks it waits for, and would
-- decide on a state another decision has changed since, or fail with a serialization error.
CREATE OR REPLACE FUNCTION ${table}_isolation() RETURNS void
LANGUAGE plpgsql STABLE AS $$
BEGIN
	IF current_setting('transaction_isolation') <> 'read committed' THEN
		RAISE EXCEPTION 'the rate limit store needs READ COMMITTED, the connection''s transaction isolation is %',
			current_setting('transaction_isolation') USING ERRCODE = 'RL001';
	END IF;
END
$$;

-- Locks the row of each (key, policy) pair in the order of key then policy, creating the missing ones where
-- `create` says so, and returns them in the order given; a pair without a row, not created, is null.
CREATE OR REPLACE FUNCTION ${table}_lock(keys text[], policies text[], creates boolean[])
RETURNS ${table}[]
LANGUAGE plpgsql AS $$
DECLARE
	n integer := array_length(keys, 1);
	locked ${table}[] := array_fill(NULL::${table}, ARRAY[n]);
	-- the pairs in the order of key then policy, with no query for the one pair of most requests
	pairs integer[] := CASE WHEN n = 1 THEN ARRAY[1] ELSE ARRAY(SELECT u.i FROM unnest(keys, policies)
		WITH ORDINALITY AS u(k, p, i) ORDER BY u.k COLLATE "C", u.p COLLATE "C") END;
	i integer;
	found_row ${table};
BEGIN
	PERFORM ${table}_isolation();
	FOREACH i IN ARRAY pairs LOOP
		LOOP
			SELECT * INTO found_row FROM ${table} t WHERE t.key = keys[i] AND t.policy = policies[i] FOR UPDATE;
			EXIT WHEN FOUND OR NOT creates[i];
			-- waits for a decision creating the same row, and then leaves it; a row deleted as expired before the
			-- next statement is created again
			INSERT INTO ${table} (key, policy, expires_at) VALUES (keys[i], policies[i], 0) ON CONFLICT DO NOTHING;
		END LOOP;
		IF FOUND THEN
			locked[i] := found_row;
		END IF;
	END LOOP;
	RETURN locked;
END
$$;

-- Writes a row back as a decision left it. In PL/pgSQL, whose plan a session keeps, where an SQL function's
-- statement would be planned again at every call.
CREATE OR REPLACE FUNCTION ${table}_write(s ${table}) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	UPDATE ${table} t SET algorithm = s.algorithm, instant = s.instant, ticks = s.ticks, counts = s.counts,
		reserved = s.reserved, penalty_until = s.penalty_until,
		expires_at = greatest(s.expires_at, coalesce(s.penalty_until, s.expires_at))
	WHERE t.key = s.key AND t.policy = s.policy;
END
$$;

-- Decides one request under several limits at once, all or nothing: limit i is the policy whose state is
-- named policies[i] on keys[i], with its algorithm, limit, window in microseconds, calendar (five values per
-- limit in calendars, the period number and four boundaries; zeros for none), burst, cost, shaping (a leaky
-- bucket's delay-after, the longest a token bucket's or GCRA's request may wait in microseconds) and penalty in
-- microseconds. With peek, takes nothing and replies as to a request another limit refused. A limit i whose key
-- has no state yet first takes over the permits in use under the first of the policies it changed from (each j
-- with from_limits[j] = i, newest first, with that policy's values in the from_ arrays) that holds a state, as
-- the carry-over script does. Returns nine integers per limit, as ${table}_step replies.
CREATE OR REPLACE FUNCTION ${table}_decide(given_now bigint, peek boolean, keys text[], policies text[],
	algorithms text[], limits bigint[], windows bigint[], calendars bigint[], bursts bigint[], costs bigint[],
	shapings bigint[], penalties bigint[], from_limits integer[], from_policies text[], from_limits_of bigint[],
	from_windows bigint[], from_bursts bigint[], from_capacities bigint[], from_shapings bigint[])
RETURNS bigint[]
LANGUAGE plpgsql AS $$
DECLARE
	n integer := array_length(keys, 1);
	m integer := coalesce(array_length(from_limits, 1), 0);
	rows_ ${table}[];
	now_us bigint;
	allowed boolean := NOT peek;
	admitted boolean[] := array_fill(false, ARRAY[n]);
	blocked bigint[] := array_fill(NULL::bigint, ARRAY[n]);
	result bigint[] := '{}';
	reply bigint[];
	r record;
	-- one limit without a penalty steps once as if allowed, and needs no second step when it admits
	one_step boolean := n = 1 AND coalesce(penalties[1], 0) <= 0;
	first record;
	s ${table};
	cal bigint[];
	used numeric;
	carried numeric;
	admits numeric;
BEGIN
	IF m = 0 THEN
		rows_ := ${table}_lock(keys, policies, array_fill(true, ARRAY[n]));
	ELSE
		rows_ := ${table}_lock(keys || ARRAY(SELECT keys[u.i] FROM unnest(from_limits) WITH ORDINALITY AS u(i, o)
				ORDER BY u.o),
			policies || from_policies, array_fill(true, ARRAY[n]) || array_fill(false, ARRAY[m]));
	END IF;
	-- read after the locks, so that no decision on a row is earlier than the one before it
	now_us := ${table}_now(given_now);
	FOR i IN 1 .. n LOOP
		cal := CASE WHEN calendars[5 * i - 3] < calendars[5 * i - 2] THEN calendars[5 * i - 4 : 5 * i] END;
		IF rows_[i].algorithm IS NULL THEN
			FOR j IN 1 .. m LOOP
				CONTINUE WHEN from_limits[j] <> i OR rows_[n + j].algorithm IS DISTINCT FROM algorithms[i];
				-- what the key has in use there, and a leaky bucket's request in service; at most what a fresh key
				-- admits in a row
				r := ${table}_step(rows_[n + j], algorithms[i], from_limits_of[j], from_windows[j], cal,
					from_bursts[j], 1, from_shapings[j], now_us, false);
				used := from_capacities[j] - r.reply[2];
				IF algorithms[i] = 'LEAKY_BUCKET' AND r.reply[4] > 0 THEN
					used := used + 1;
				END IF;
				DELETE FROM ${table} t WHERE t.key = rows_[n + j].key AND t.policy = rows_[n + j].policy;
				admits := CASE WHEN algorithms[i] = 'LEAKY_BUCKET' THEN bursts[i] + 1
					WHEN algorithms[i] IN ('TOKEN_BUCKET', 'GCRA') THEN bursts[i] ELSE limits[i] END;
				carried := least(used, admits);
				IF carried > 0 THEN
					r := ${table}_step(rows_[i], algorithms[i], limits[i], windows[i], cal, bursts[i], carried::bigint,
						shapings[i], now_us, true);
					rows_[i] := r.s;
					PERFORM ${table}_write(r.s);
				END IF;
				EXIT;
			END LOOP;
		END IF;
		r := ${table}_step(rows_[i], algorithms[i], limits[i], windows[i], cal, bursts[i], costs[i], shapings[i],
			now_us, CASE WHEN one_step THEN NOT peek END);
		first := r;
		admitted[i] := r.admitted;
		IF penalties[i] > 0 THEN
			IF rows_[i].penalty_until > now_us THEN
				blocked[i] := rows_[i].penalty_until - now_us;
				admitted[i] := false;
			ELSIF NOT admitted[i] AND NOT peek THEN
				-- refused by this policy itself: the penalty starts
				s := rows_[i];
				s.penalty_until := now_us + penalties[i];
				rows_[i] := s;
				PERFORM ${table}_write(s);
				blocked[i] := penalties[i];
			END IF;
		END IF;
		allowed := allowed AND admitted[i];
	END LOOP;
	FOR i IN 1 .. n LOOP
		cal := CASE WHEN calendars[5 * i - 3] < calendars[5 * i - 2] THEN calendars[5 * i - 4 : 5 * i] END;
		IF one_step AND allowed = (NOT peek) THEN
			r := first;
		ELSE
			r := ${table}_step(rows_[i], algorithms[i], limits[i], windows[i], cal, bursts[i], costs[i], shapings[i],
				now_us, allowed);
		END IF;
		IF r.dirty THEN
			PERFORM ${table}_write(r.s);
		END IF;
		reply := r.reply;
		IF blocked[i] IS NOT NULL THEN
			-- refused for the rest of the penalty, in whole microseconds
			reply[1] := 0;
			reply[2] := 0;
			reply[3] := blocked[i];
			reply[5] := 0;
			reply[6] := 0;
			reply[8] := 0;
			IF reply[4] < blocked[i] THEN
				reply[4] := blocked[i];
				reply[7] := 0;
			END IF;
		END IF;
		result := result || reply;
	END LOOP;
	RETURN result;
END
$$;

-- Gives back the permits that allowed requests took, as the give-back script does: limit i took costs[i]
-- permits at takens[i], in microseconds. Returns how many limits had a state to give back to.
CREATE OR REPLACE FUNCTION ${table}_give_back(given_now bigint, keys text[], policies text[], algorithms text[],
	limits bigint[], windows bigint[], calendars bigint[], bursts bigint[], costs bigint[], takens bigint[])
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
	n integer := array_length(keys, 1);
	rows_ ${table}[] := ${table}_lock(keys, policies, array_fill(false, ARRAY[n]));
	now_us bigint := ${table}_now(given_now);
	given integer := 0;
	s ${table};
	w record;
	cal bigint[];
	alg text;
	lim bigint;
	win bigint;
	cost bigint;
	taken_at bigint;
	g numeric;
	scale numeric;
	interval_ numeric;
	ahead numeric;
	returned numeric;
	taken numeric;
	prev numeric;
	cur numeric;
	len integer;
	dropped integer;
	kept bigint[];
BEGIN
	FOR i IN 1 .. n LOOP
		s := rows_[i];
		alg := algorithms[i];
		CONTINUE WHEN s.key IS NULL OR s.algorithm IS DISTINCT FROM alg;
		given := given + 1;
		lim := limits[i];
		win := windows[i];
		cost := costs[i];
		taken_at := takens[i];
		IF alg = 'FIXED_WINDOW' THEN
			-- only while the window it was taken in lasts
			cal := CASE WHEN calendars[5 * i - 3] < calendars[5 * i - 2] THEN calendars[5 * i - 4 : 5 * i] END;
			w := ${table}_window(now_us, win, cal);
			IF taken_at >= w.start AND taken_at < now_us + w.until_next AND s.instant = w.idx AND s.counts[1] > 0 THEN
				s.counts := ARRAY[greatest(least(s.counts[1], lim) - cost, 0)];
				s.expires_at := now_us + w.until_next;
				PERFORM ${table}_write(s);
			END IF;
		ELSIF alg = 'SLIDING_LOG' THEN
			-- the request's own entries while they are in the window, not the newest ones
			IF taken_at > now_us - win THEN
				kept := '{}';
				dropped := 0;
				len := coalesce(array_length(s.counts, 1), 0);
				FOR k IN 1 .. len LOOP
					IF s.counts[k] = taken_at AND dropped < cost THEN
						dropped := dropped + 1;
					ELSE
						kept := kept || s.counts[k];
					END IF;
				END LOOP;
				IF dropped > 0 THEN
					s.counts := kept;
					PERFORM ${table}_write(s);
				END IF;
			END IF;
		ELSIF alg = 'SLIDING_WINDOW_COUNTER' THEN
			-- counted in the current window while it lasts, then in the previous one
			w := ${table}_window(now_us, win, NULL);
			taken := ${table}_fdiv(taken_at, win);
			prev := s.counts[1];
			cur := s.counts[2];
			IF w.idx - s.instant = 1 THEN
				prev := cur;
				cur := 0;
				s.instant := w.idx;
			END IF;
			IF s.instant = w.idx AND (taken = w.idx OR taken = w.idx - 1) THEN
				prev := least(prev, lim);
				cur := least(cur, lim);
				IF taken = w.idx THEN
					cur := greatest(cur - cost, 0);
				ELSE
					prev := greatest(prev - cost, 0);
				END IF;
				s.counts := ARRAY[prev, cur];
				s.expires_at := now_us + CASE WHEN cur > 0 THEN 2 * win - (now_us - w.start)
					WHEN prev > 0 THEN win - (now_us - w.start) ELSE 0 END;
				PERFORM ${table}_write(s);
			END IF;
		ELSE
			-- the instant moves back by the cost less the time since the request was taken, never before now
			g := gcd(win, lim);
			scale := lim / g;
			interval_ := win / g;
			ahead := 0;
			IF s.instant >= now_us THEN
				ahead := least((s.instant - now_us) * scale + s.ticks,
					(bursts[i] + 1 + CASE WHEN s.reserved THEN lim ELSE 0 END) * interval_);
			END IF;
			returned := cost * interval_ - (now_us - taken_at) * scale;
			IF ahead > 0 AND returned > 0 THEN
				ahead := greatest(ahead - returned, 0);
				s := ${table}_save_ahead(s, now_us, ahead, scale, s.reserved AND ahead > bursts[i] * interval_);
				PERFORM ${table}_write(s);
			END IF;
		END IF;
	END LOOP;
	RETURN given;
END
$$;

-- The instances that share the table's quotas: each store calls ${table}_heartbeat about once a second with a
-- name of its own, and the failure policy LOCAL gives each of the `n` members seen within the last `live_ms`
-- milliseconds, on the database's clock, its share ceil(limit / n) of every limit while the database is away.
CREATE TABLE IF NOT EXISTS ${table}_fleet (
	member text COLLATE "C" PRIMARY KEY,
	seen_at timestamptz NOT NULL
);

-- Records that `me` is alive, deletes the members gone for ten times `live_ms`, and returns how many were seen
-- within `live_ms`, `me` included.
CREATE OR REPLACE FUNCTION ${table}_heartbeat(me text, live_ms integer) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	now_ timestamptz := clock_timestamp();
	n integer;
BEGIN
	INSERT INTO ${table}_fleet AS f (member, seen_at) VALUES (me, now_)
		ON CONFLICT (member) DO UPDATE SET seen_at = excluded.seen_at;
	DELETE FROM ${table}_fleet WHERE seen_at < now_ - make_interval(secs => 10 * live_ms / 1000.0);
	SELECT count(*) INTO n FROM ${table}_fleet WHERE seen_at > now_ - make_interval(secs => live_ms / 1000.0);
	RETURN n;
END
$$;

-- The runtime changes of policies that the fleet shares, by key prefix: the values each changed policy takes, in
-- the database rather than in any instance, so that an instance that starts later applies them too. Every change
-- advances ${table}_version, which each heartbeat reads, and is announced at its commit by NOTIFY on the channel
-- named after the table with `_changes`, its key prefix the payload, for instances that LISTEN to act at once.
CREATE TABLE IF NOT EXISTS ${table}_changes (
	prefix text COLLATE "C" NOT NULL,
	policy text COLLATE "C" NOT NULL,
	-- the policy's limit, window in microseconds and burst
	lim bigint NOT NULL,
	window_us bigint NOT NULL,
	burst bigint NOT NULL,
	PRIMARY KEY (prefix, policy)
);

CREATE SEQUENCE IF NOT EXISTS ${table}_version;

-- Shares the values of `policy` under `prefix_`, or removes its change when `lim` is null, and announces it on
-- `channel`; returns the version it made.
CREATE OR REPLACE FUNCTION ${table}_share(prefix_ text, policy_ text, lim_ bigint, window_us_ bigint, burst_ bigint,
	channel text) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	IF lim_ IS NULL THEN
		DELETE FROM ${table}_changes c WHERE c.prefix = prefix_ AND c.policy = policy_;
	ELSE
		INSERT INTO ${table}_changes AS c (prefix, policy, lim, window_us, burst)
			VALUES (prefix_, policy_, lim_, window_us_, burst_)
			ON CONFLICT (prefix, policy) DO UPDATE SET lim = excluded.lim, window_us = excluded.window_us,
				burst = excluded.burst;
	END IF;
	PERFORM pg_notify(channel, prefix_);
	RETURN nextval('${table}_version');
END
$$;

-- Requests in flight: each holds a lease, a row of its client's key and the limit's name that expires, in
-- microseconds on the store's clock, unless its holder renews it, so that the leases of an instance that died
-- holding them expire and no permit is lost for good.
CREATE TABLE IF NOT EXISTS ${table}_leases (
	key text COLLATE "C" NOT NULL,
	name text COLLATE "C" NOT NULL,
	lease text COLLATE "C" NOT NULL,
	expires_at bigint NOT NULL,
	PRIMARY KEY (key, name, lease)
);

-- Grants `lease_` on the pair (key_, name_) when fewer than `lim` of its leases are held, for `lasts`
-- microseconds, after deleting the pair's expired ones. Calls on one pair take turns on an advisory lock of the
-- transaction, so that each counts what the one before it granted. Returns {1 if granted else 0, the leases
-- held, this one included if granted}.
CREATE OR REPLACE FUNCTION ${table}_acquire(given_now bigint, key_ text, name_ text, lease_ text, lim bigint,
	lasts bigint) RETURNS bigint[]
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	now_us bigint;
	held bigint;
BEGIN
	PERFORM ${table}_isolation();
	PERFORM pg_advisory_xact_lock(hashtext('${table}'), hashtext(key_ || chr(31) || name_));
	now_us := ${table}_now(given_now);
	DELETE FROM ${table}_leases l WHERE l.key = key_ AND l.name = name_ AND l.expires_at <= now_us;
	SELECT count(*) INTO held FROM ${table}_leases l WHERE l.key = key_ AND l.name = name_;
	IF held < lim THEN
		INSERT INTO ${table}_leases (key, name, lease, expires_at) VALUES (key_, name_, lease_, now_us + lasts);
		RETURN ARRAY[1, held + 1];
	END IF;
	RETURN ARRAY[0, held];
END
$$;
