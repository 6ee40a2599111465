package dev.ratelimit.sample;

/**
 * Runs the sample application's {@code shadow} profile on a real server with its default, in-memory store.
 */
class InMemoryPolicyShadowSampleIT extends AbstractPolicyShadowSampleIT {

}
