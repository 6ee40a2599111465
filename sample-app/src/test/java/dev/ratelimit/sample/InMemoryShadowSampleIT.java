package dev.ratelimit.sample;

/**
 * Runs the sample application in shadow mode on a real server with its default, in-memory store.
 */
class InMemoryShadowSampleIT extends AbstractShadowSampleIT {

}
