package dev.leasehold.samples.ticketoffice;

import java.util.List;
import java.util.Optional;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.support.GeneratedKeyHolder;
import org.springframework.jdbc.support.KeyHolder;
import org.springframework.stereotype.Repository;

/** Plain SQL over the {@code shows}, {@code booking} and {@code settlement} tables (see schema.sql). */
@Repository
public class ShowRepository {

    private static final String SHOW_COLUMNS = """
            SELECT s.id, s.title, s.seats_total, s.seats_left, s.price_cents,
                   COALESCE((SELECT SUM(b.seats) FROM booking b WHERE b.show_id = s.id), 0) AS booked
            FROM shows s""";

    private final JdbcClient jdbc;

    public ShowRepository(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    public List<Show> findAll() {
        return jdbc.sql(SHOW_COLUMNS + " ORDER BY s.id").query(ShowRepository::show).list();
    }

    public Optional<Show> find(long showId) {
        return jdbc.sql(SHOW_COLUMNS + " WHERE s.id = :id").param("id", showId).query(ShowRepository::show).optional();
    }

    public long count() {
        return jdbc.sql("SELECT COUNT(*) FROM shows").query(Long.class).single();
    }

    public long create(String title, int seats, int priceCents) {
        KeyHolder keys = new GeneratedKeyHolder();
        jdbc.sql("INSERT INTO shows (title, seats_total, seats_left, price_cents) VALUES (:title, :seats, :seats, :price)")
            .param("title", title)
            .param("seats", seats)
            .param("price", priceCents)
            .update(keys, "id");
        long id = keys.getKey().longValue();
        jdbc.sql("INSERT INTO settlement (show_id, seats_sold, revenue_cents, fence) VALUES (:id, 0, 0, 0)")
            .param("id", id)
            .update();
        return id;
    }

    /** Seats left, as this transaction sees them now. */
    public int seatsLeft(long showId) {
        return jdbc.sql("SELECT seats_left FROM shows WHERE id = :id")
            .param("id", showId)
            .query(Integer.class)
            .optional()
            .orElseThrow(() -> new ShowNotFoundException(showId));
    }

    public int priceCents(long showId) {
        return jdbc.sql("SELECT price_cents FROM shows WHERE id = :id").param("id", showId).query(Integer.class).single();
    }

    /**
     * Writes a booking and the new stock, as the caller computed it from what it read before: a
     * read-modify-write that is only right while nobody else books the show in between.
     */
    public long insertBooking(long showId, int seats, int seatsLeftAfter, int priceCents, String customer, String node,
            long fence) {
        KeyHolder keys = new GeneratedKeyHolder();
        jdbc.sql("""
                INSERT INTO booking (show_id, seats, price_cents, customer, node, fence)
                VALUES (:show, :seats, :price, :customer, :node, :fence)""")
            .param("show", showId)
            .param("seats", seats)
            .param("price", priceCents)
            .param("customer", customer)
            .param("node", node)
            .param("fence", fence)
            .update(keys, "id");
        jdbc.sql("UPDATE shows SET seats_left = :left WHERE id = :id")
            .param("left", seatsLeftAfter)
            .param("id", showId)
            .update();
        return keys.getKey().longValue();
    }

    public void updatePrice(long showId, int priceCents) {
        int rows = jdbc.sql("UPDATE shows SET price_cents = :price WHERE id = :id")
            .param("price", priceCents)
            .param("id", showId)
            .update();
        if (rows == 0) {
            throw new ShowNotFoundException(showId);
        }
    }

    /** Seats sold and revenue of a show, from its bookings. */
    public Totals totals(long showId) {
        return jdbc.sql("SELECT COALESCE(SUM(seats), 0), COALESCE(SUM(seats * price_cents), 0) FROM booking WHERE show_id = :id")
            .param("id", showId)
            .query((rs, row) -> new Totals(rs.getLong(1), rs.getLong(2)))
            .single();
    }

    /**
     * Writes the settlement only if {@code fence} is newer than the one that wrote it last: a holder whose
     * lock was lost (a long pause, an expired lease) and whose token is older changes nothing.
     * @return whether the database took the write
     */
    public boolean saveSettlement(long showId, Totals totals, long fence, String node) {
        return jdbc.sql("""
                UPDATE settlement
                SET seats_sold = :seats, revenue_cents = :revenue, fence = :token, settled_by = :node,
                    settled_at = CURRENT_TIMESTAMP
                WHERE show_id = :id AND fence < :token""")
            .param("seats", totals.seats())
            .param("revenue", totals.revenueCents())
            .param("token", fence)
            .param("node", node)
            .param("id", showId)
            .update() == 1;
    }

    public Optional<Settlement> settlement(long showId) {
        return jdbc.sql("SELECT show_id, seats_sold, revenue_cents, fence, settled_by FROM settlement WHERE show_id = :id")
            .param("id", showId)
            .query((rs, row) -> new Settlement(rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getString(5)))
            .optional();
    }

    private static Show show(java.sql.ResultSet rs, int row) throws java.sql.SQLException {
        int total = rs.getInt("seats_total");
        long booked = rs.getLong("booked");
        return new Show(rs.getLong("id"), rs.getString("title"), total, rs.getInt("seats_left"), rs.getInt("price_cents"),
                booked, Math.max(0, booked - total));
    }

    public record Totals(long seats, long revenueCents) {
    }

    /** @param fence the fencing token of the last write that the database took */
    public record Settlement(long showId, long seatsSold, long revenueCents, long fence, String settledBy) {
    }
}
