package dev.leasehold.docs.snippets.async;

record Shipment(long orderId, long fencingToken) {
}
