/**
 * A runnable demo of every ratelimit feature: the six algorithms side by side, limits by user, stacked limits,
 * a class-level limit, a limit overridden and one declared only in {@code application.yml}, limits per plan of
 * the client and a cost computed per request.
 */
@NullMarked
package dev.ratelimit.sample;

import org.jspecify.annotations.NullMarked;
