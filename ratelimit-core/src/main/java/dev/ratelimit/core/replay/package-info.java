/**
 * The replay tool: runs a recorded trace of requests through the six algorithms and prints each decision or a
 * summary, so that the algorithms can be compared on one's own traffic.
 */
@NullMarked
package dev.ratelimit.core.replay;

import org.jspecify.annotations.NullMarked;
