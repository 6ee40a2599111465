/**
 * Benchmarks and experiments that measure ratelimit, alone and beside its peers; run by hand, never by
 * {@code verify}.
 */
@NullMarked
package dev.ratelimit.benchmarks;

import org.jspecify.annotations.NullMarked;
