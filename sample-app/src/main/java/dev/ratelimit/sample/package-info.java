/**
 * A runnable demo of every ratelimit feature: the six algorithms side by side, limits by user, stacked limits,
 * a class-level limit, a limit overridden and one declared only in {@code application.yml}.
 */
@NullMarked
package dev.ratelimit.sample;

import org.jspecify.annotations.NullMarked;
