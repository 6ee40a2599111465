/**
 * The in-memory store: the six algorithms over per-key state held in this JVM, for a single instance or as a
 * local fallback when Redis is out of reach.
 */
@NullMarked
package dev.ratelimit.core.memory;

import org.jspecify.annotations.NullMarked;
