package dev.ratelimit.docs;

/**
 * An order of a customer, which {@link QuoteService} places.
 *
 * @param customerId who placed it
 */
public record Order(String customerId) {

}
