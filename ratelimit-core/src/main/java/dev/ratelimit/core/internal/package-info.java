/**
 * What the stores whose state lives in a shared server, Redis and PostgreSQL, do alike when that server fails:
 * the kinds of failure, when a run of them is an outage, the bounded log of it, the failure listeners, what each
 * failure policy decides and each instance's share of a limit under {@link dev.ratelimit.core.FailurePolicy#LOCAL},
 * the limiters of their policies and the runtime changes that made some of them, the names of a changed policy's
 * states, a calendar window's boundaries, and the checks of the durations their builders take. Public only so that both
 * store packages can use it: not API, and it may change in any release.
 */
@NullMarked
package dev.ratelimit.core.internal;

import org.jspecify.annotations.NullMarked;
