package dev.leasehold.engine.key;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static dev.leasehold.engine.key.Phase.ACQUIRING;
import static dev.leasehold.engine.key.Phase.CLOSED;
import static dev.leasehold.engine.key.Phase.CLOSING;
import static dev.leasehold.engine.key.Phase.FREE;
import static dev.leasehold.engine.key.Phase.HELD;
import static dev.leasehold.engine.key.Phase.LINGERING;
import static dev.leasehold.engine.key.Phase.TAKE_OVER_LOST;
import static dev.leasehold.engine.key.Phase.TAKING_OVER;

/**
 * The legal moves of a key's state ({@link KeyLine}): from a phase, on an event, to a phase. Every move KeyLine makes
 * is checked against this table when assertions are enabled (the tests): an illegal one fails with its from, event
 * and state. An event that leaves the state as it is (its lock is no longer the holder: the event is stale) is not a
 * move. The state diagram in docs/how-it-works.md is checked against this table by a test.
 */
public final class KeyTransitions {

    /** The events of a key, named as KeyLine's transitions. */
    public enum Event {
        /** A waiter queues; it has the turn at once when nobody had it. */
        ENTER("enter"),
        /** The waiter with the turn ends without the lock (gave up, failed, shut down). */
        LEAVE_TURN("leaveTurn"),
        /** Redis granted an exclusive lock to the waiter with the turn. */
        GRANTED("granted"),
        /** Redis granted a read lock: readers share the key, so the turn passes on. */
        GRANTED_SHARED("grantedShared"),
        /** The holder's last hold was given back: handed on, lingers, or released in Redis. */
        RELEASE("release"),
        /** The lingering release looks again (woken, or its linger ran out). */
        LINGER_ENDED("lingerEnded"),
        /** A lock handed on with a token from the reserved block is taken over. */
        TAKEN_OVER("takenOver"),
        /** A lock handed on was lost or stopped before it was taken over (its waiter keeps the turn). */
        TAKE_OVER_FAILED("takeOverFailed"),
        /** The successor's token reservation confirmed the lease. */
        RESERVATION_ANSWERED("reservationAnswered"),
        /** The successor's token reservation found the key gone from Redis. */
        RESERVATION_REFUSED("reservationRefused"),
        /** The successor's token reservation got no answer in time, or its waiter stopped. */
        RESERVATION_TIMED_OUT("reservationTimedOut"),
        /** Redis confirmed the holder's lease (a renewal): the holders before it held it confirmed. */
        RENEWAL_CONFIRMED("renewalConfirmed"),
        /** The holder's lease was found lost (a refused renewal, a lease run out, a refused release). */
        LOST("lost"),
        /** The engine shuts down. */
        CLOSE("close");

        /** The name in the state diagram (KeyLine's method). */
        public final String label;

        Event(String label) {
            this.label = label;
        }
    }

    private static final Map<Phase, Map<Event, Set<Phase>>> LEGAL = new EnumMap<>(Phase.class);

    static {
        allow(FREE, Event.ENTER, ACQUIRING);
        allow(ACQUIRING, Event.LEAVE_TURN, ACQUIRING, FREE);
        allow(ACQUIRING, Event.GRANTED_SHARED, ACQUIRING, FREE);
        allow(ACQUIRING, Event.GRANTED, HELD);
        allow(HELD, Event.RELEASE, TAKING_OVER, LINGERING, ACQUIRING, FREE);
        allow(LINGERING, Event.LINGER_ENDED, TAKING_OVER, ACQUIRING, FREE);
        allow(TAKING_OVER, Event.TAKEN_OVER, HELD);
        allow(TAKING_OVER, Event.RESERVATION_ANSWERED, HELD, ACQUIRING);
        allow(TAKING_OVER, Event.RESERVATION_REFUSED, ACQUIRING);
        allow(TAKING_OVER, Event.RESERVATION_TIMED_OUT, ACQUIRING);
        allow(TAKING_OVER, Event.TAKE_OVER_FAILED, ACQUIRING);
        // a handed lock released unclaimed (its waiter ended meanwhile) is handed on, or released in Redis
        allow(TAKING_OVER, Event.RELEASE, TAKING_OVER, ACQUIRING, FREE);
        allow(TAKING_OVER, Event.LOST, TAKE_OVER_LOST);
        allow(TAKE_OVER_LOST, Event.TAKE_OVER_FAILED, ACQUIRING);
        allow(TAKE_OVER_LOST, Event.RESERVATION_ANSWERED, ACQUIRING);
        allow(TAKE_OVER_LOST, Event.RESERVATION_REFUSED, ACQUIRING);
        allow(TAKE_OVER_LOST, Event.RESERVATION_TIMED_OUT, ACQUIRING);
        allow(TAKE_OVER_LOST, Event.RELEASE, ACQUIRING, FREE);
        // a waiter whose step failed (a bug) leaves its turn while its take-over is still on its way
        allow(TAKING_OVER, Event.LEAVE_TURN, ACQUIRING, FREE);
        allow(TAKE_OVER_LOST, Event.LEAVE_TURN, ACQUIRING, FREE);
        allow(HELD, Event.RENEWAL_CONFIRMED, HELD);
        allow(TAKING_OVER, Event.RENEWAL_CONFIRMED, TAKING_OVER);
        allow(CLOSING, Event.RENEWAL_CONFIRMED, CLOSING);
        allow(HELD, Event.LOST, ACQUIRING, FREE);
        allow(LINGERING, Event.LOST, ACQUIRING, FREE);
        allow(FREE, Event.CLOSE, CLOSED);
        allow(ACQUIRING, Event.CLOSE, CLOSED);
        allow(HELD, Event.CLOSE, CLOSING);
        allow(LINGERING, Event.CLOSE, CLOSING);
        allow(TAKING_OVER, Event.CLOSE, CLOSING);
        allow(TAKE_OVER_LOST, Event.CLOSE, CLOSING);
        allow(CLOSED, Event.GRANTED, CLOSING);
        allow(CLOSING, Event.GRANTED, CLOSING);
        allow(CLOSING, Event.GRANTED_SHARED, CLOSED);
        allow(CLOSING, Event.LEAVE_TURN, CLOSED);
        allow(CLOSING, Event.RELEASE, CLOSED);
        allow(CLOSING, Event.LINGER_ENDED, CLOSED);
        allow(CLOSING, Event.LOST, CLOSED);
        allow(CLOSING, Event.TAKE_OVER_FAILED, CLOSED);
        allow(CLOSING, Event.RESERVATION_ANSWERED, CLOSED);
        allow(CLOSING, Event.RESERVATION_REFUSED, CLOSED);
        allow(CLOSING, Event.RESERVATION_TIMED_OUT, CLOSED);
    }

    private KeyTransitions() {
    }

    private static void allow(Phase from, Event event, Phase... to) {
        LEGAL.computeIfAbsent(from, f -> new EnumMap<>(Event.class))
                .computeIfAbsent(event, e -> EnumSet.noneOf(Phase.class)).addAll(List.of(to));
    }

    /** Whether the table has the move. */
    public static boolean legal(Phase from, Event event, Phase to) {
        Map<Event, Set<Phase>> events = LEGAL.get(from);
        Set<Phase> targets = events == null ? null : events.get(event);
        return targets != null && targets.contains(to);
    }

    /**
     * For an assertion: true when the move is legal, else an {@link IllegalStateException} naming the from, the
     * event and the state it would have made (so an assertion-enabled run fails at the first illegal move).
     */
    static boolean check(LineState from, Event event, LineState to, String key) {
        if (!legal(from.phase, event, to.phase)) {
            throw new IllegalStateException("Illegal move of key '" + key + "': from " + from + " on " + event.label
                    + " to " + to);
        }
        return true;
    }

    /** Every legal move as "FROM --> TO: event", one line per pair of phases (its events in table order). */
    public static List<String> edges() {
        Map<String, List<String>> byEdge = new LinkedHashMap<>();
        for (Map.Entry<Phase, Map<Event, Set<Phase>>> from : LEGAL.entrySet()) {
            for (Map.Entry<Event, Set<Phase>> event : from.getValue().entrySet()) {
                for (Phase to : event.getValue()) {
                    byEdge.computeIfAbsent(from.getKey() + " --> " + to, k -> new ArrayList<>())
                            .add(event.getKey().label);
                }
            }
        }
        List<String> edges = new ArrayList<>();
        byEdge.forEach((edge, events) -> edges.add(edge + ": " + String.join(", ", events)));
        return edges;
    }
}
