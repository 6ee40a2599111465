package dev.ratelimit.docs;

/**
 * The receipt of an order that {@link QuoteService} placed.
 *
 * @param customerId who placed the order
 */
public record Receipt(String customerId) {

}
