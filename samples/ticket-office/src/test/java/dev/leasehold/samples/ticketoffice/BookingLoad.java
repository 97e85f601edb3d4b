package dev.leasehold.samples.ticketoffice;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Concurrent booking attempts (one seat each) sent to the nodes in turn, all threads released at once.
 * Runs a fixed number of attempts, or until {@link #stop()}.
 */
final class BookingLoad implements AutoCloseable {

    final AtomicInteger booked = new AtomicInteger();

    final AtomicInteger soldOut = new AtomicInteger();

    final List<String> errors = new CopyOnWriteArrayList<>();

    private final AtomicInteger sent = new AtomicInteger();

    private final ExecutorService pool;

    private final int attempts;

    private volatile boolean stopped;

    private BookingLoad(List<TicketOfficeNode> nodes, long showId, int attempts, int threads, boolean locked) {
        this.attempts = attempts;
        this.pool = Executors.newFixedThreadPool(threads);
        String path = "/api/shows/" + showId + (locked ? "/bookings" : "/unlocked-bookings");
        CountDownLatch start = new CountDownLatch(1);
        for (int t = 0; t < threads; t++) {
            pool.execute(() -> {
                try {
                    start.await();
                }
                catch (InterruptedException ex) {
                    return;
                }
                int attempt;
                while (!stopped && (attempt = sent.getAndIncrement()) < this.attempts) {
                    try {
                        HttpResponse<String> response = nodes.get(attempt % nodes.size())
                            .post(path, "{\"seats\":1,\"customer\":\"c" + attempt + "\"}");
                        switch (response.statusCode()) {
                            case 201 -> booked.incrementAndGet();
                            case 409 -> soldOut.incrementAndGet();
                            default -> errors.add("HTTP " + response.statusCode() + " " + response.body());
                        }
                    }
                    catch (RuntimeException ex) {
                        errors.add(ex.toString());
                    }
                }
            });
        }
        pool.shutdown();
        start.countDown();
    }

    static BookingLoad start(List<TicketOfficeNode> nodes, long showId, int attempts, int threads, boolean locked) {
        return new BookingLoad(nodes, showId, attempts, threads, locked);
    }

    /** Waits until every attempt got its answer. */
    BookingLoad await(long seconds) throws InterruptedException {
        if (!pool.awaitTermination(seconds, TimeUnit.SECONDS)) {
            throw new AssertionError("the load did not finish in " + seconds + " s (" + booked + " booked, "
                    + soldOut + " sold out, " + errors.size() + " errors)");
        }
        return this;
    }

    void stop() {
        stopped = true;
    }

    @Override
    public void close() throws InterruptedException {
        stop();
        pool.shutdownNow();
        pool.awaitTermination(30, TimeUnit.SECONDS);
    }
}
