package dev.leasehold.samples.ticketoffice;

import java.util.List;
import java.util.Map;

import dev.leasehold.LockAcquisitionException;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The REST API:
 * <ul>
 * <li>{@code GET /api/node}: this instance's name; {@code GET /api/nodes}: every instance's name by its Leasehold
 * instance id (the live page labels the holders and the queue with them)</li>
 * <li>{@code GET /api/lock-waits}: the bookings' lock waits, every figure from one snapshot ({@link LockWaits})</li>
 * <li>{@code GET /api/shows}: every show with its stock (no lock: the live page polls it)</li>
 * <li>{@code POST /api/shows} {@code {"title", "seats", "priceCents"}}: a new show</li>
 * <li>{@code GET /api/shows/{id}}: one show, under a READ lock</li>
 * <li>{@code PUT /api/shows/{id}/price} {@code {"priceCents"}}: under a WRITE lock</li>
 * <li>{@code POST /api/shows/{id}/bookings} {@code {"seats", "customer"}}: books under the lock; 201, or 409 when sold out</li>
 * <li>{@code POST /api/shows/{id}/unlocked-bookings}: the same without the lock (to see overselling)</li>
 * <li>{@code POST /api/shows/{id}/settlement}: settles now; {@code GET} shows the last settlement</li>
 * </ul>
 */
@RestController
@RequestMapping("/api")
public class TicketOfficeController {

    private final ShowRepository shows;

    private final BookingService bookings;

    private final UnlockedBookingService unlockedBookings;

    private final CatalogService catalog;

    private final SettlementJob settlement;

    private final Box box;

    private final LockWaits lockWaits;

    private final NodeNames nodeNames;

    public TicketOfficeController(ShowRepository shows, BookingService bookings, UnlockedBookingService unlockedBookings,
            CatalogService catalog, SettlementJob settlement, Box box, LockWaits lockWaits, NodeNames nodeNames) {
        this.lockWaits = lockWaits;
        this.nodeNames = nodeNames;
        this.shows = shows;
        this.bookings = bookings;
        this.unlockedBookings = unlockedBookings;
        this.catalog = catalog;
        this.settlement = settlement;
        this.box = box;
    }

    @GetMapping("/node")
    public Map<String, String> node() {
        return Map.of("node", box.node());
    }

    @GetMapping("/nodes")
    public Map<String, String> nodes() {
        return nodeNames.byInstanceId();
    }

    @GetMapping("/lock-waits")
    public LockWaits.Report lockWaits() {
        return lockWaits.report();
    }

    @GetMapping("/shows")
    public List<Show> shows() {
        return shows.findAll();
    }

    @PostMapping("/shows")
    public ResponseEntity<Show> create(@RequestBody NewShow request) {
        if (request.seats() < 1 || request.title() == null || request.title().isBlank()) {
            throw new IllegalArgumentException("a show needs a title and at least one seat");
        }
        long id = shows.create(request.title(), request.seats(), request.priceCents());
        return ResponseEntity.status(HttpStatus.CREATED).body(shows.find(id).orElseThrow());
    }

    @GetMapping("/shows/{showId}")
    public Show show(@PathVariable long showId) {
        return catalog.show(showId);
    }

    @PutMapping("/shows/{showId}/price")
    public Show changePrice(@PathVariable long showId, @RequestBody PriceChange change) {
        return catalog.changePrice(showId, change.priceCents());
    }

    @PostMapping("/shows/{showId}/bookings")
    public ResponseEntity<Booking> book(@PathVariable long showId, @RequestBody BookingRequest request) {
        return answer(bookings.book(showId, request.seats(), customer(request)));
    }

    @PostMapping("/shows/{showId}/unlocked-bookings")
    public ResponseEntity<Booking> bookWithoutLock(@PathVariable long showId, @RequestBody BookingRequest request) {
        return answer(unlockedBookings.book(showId, request.seats(), customer(request)));
    }

    @PostMapping("/shows/{showId}/settlement")
    public ResponseEntity<?> settle(@PathVariable long showId) {
        shows.find(showId).orElseThrow(() -> new ShowNotFoundException(showId));
        return settlement.settle(showId)
            .<ResponseEntity<?>>map(ResponseEntity::ok)
            .orElseGet(() -> ResponseEntity.status(HttpStatus.CONFLICT).body(Map.of("error", "another instance is settling it now")));
    }

    @GetMapping("/shows/{showId}/settlement")
    public ShowRepository.Settlement lastSettlement(@PathVariable long showId) {
        return shows.settlement(showId).orElseThrow(() -> new ShowNotFoundException(showId));
    }

    @ExceptionHandler(IllegalArgumentException.class)
    ResponseEntity<Map<String, String>> badRequest(IllegalArgumentException ex) {
        return ResponseEntity.badRequest().body(Map.of("error", String.valueOf(ex.getMessage())));
    }

    /** The lock stayed busy for the whole wait ({@code leasehold.wait-time}): the client may try again. */
    @ExceptionHandler(LockAcquisitionException.class)
    ResponseEntity<Map<String, String>> busy(LockAcquisitionException ex) {
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).header("Retry-After", "1")
            .body(Map.of("error", "busy: " + ex.getKey() + " stayed locked"));
    }

    private static ResponseEntity<Booking> answer(Booking booking) {
        return ResponseEntity.status(booking.booked() ? HttpStatus.CREATED : HttpStatus.CONFLICT).body(booking);
    }

    private static String customer(BookingRequest request) {
        return request.customer() != null && !request.customer().isBlank() ? request.customer() : "anonymous";
    }

    public record NewShow(String title, int seats, int priceCents) {
    }

    public record PriceChange(int priceCents) {
    }
}
