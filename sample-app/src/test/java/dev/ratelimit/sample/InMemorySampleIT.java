package dev.ratelimit.sample;

/**
 * Runs the sample application on a real server with its default, in-memory store.
 */
class InMemorySampleIT extends AbstractSampleIT {

}
