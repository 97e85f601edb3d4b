package dev.leasehold.engine.key;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.leasehold.LockMode;
import dev.leasehold.engine.key.KeyTransitions.Event;
import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServer.FenceBlock;
import dev.leasehold.engine.support.EngineClock;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The table of a key's legal moves: every move a {@link KeyLine} makes is checked against it in tests (an illegal one
 * fails with its from, event and state), and the state diagrams in the docs are checked against it.
 */
class KeyTransitionsTest {

    private static final HandOffRules RULES = new HandOffRules(8, Duration.ofSeconds(1), Duration.ofMillis(100),
            Duration.ZERO);

    private static HeldLock exclusive(String key, long fencingToken) {
        return new HeldLock(LockKeys.of("lock:", key), LockMode.EXCLUSIVE, "token-" + key, fencingToken,
                Thread.currentThread(), true, 30_000, 30_000, EngineClock.nanoTime(), true);
    }

    @Test
    void theTestsRunWithTheTableChecked() {
        assertThat(KeyLine.class.desiredAssertionStatus()).as("assertions enabled for the engine's classes").isTrue();
    }

    @Test
    void anIllegalMoveFailsWithItsFromEventAndStateAndChangesNothing() {
        KeyLine line = new KeyLine("illegal", RULES);
        HeldLock lock = exclusive("illegal", 7);
        // a grant to nobody's turn: the key was FREE, no waiter entered
        assertThatThrownBy(() -> line.granted(lock, 20)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("from FREE").hasMessageContaining("on granted")
                .hasMessageContaining("to HELD holder=" + lock);
        assertThat(line.phase()).isEqualTo(Phase.FREE);
    }

    @Test
    void aHandOffAndAReleaseInRedisMoveThroughTheTable() {
        KeyLine line = new KeyLine("hand-off", RULES);
        line.enter(LockMode.EXCLUSIVE, Thread.currentThread());
        assertThat(line.phase()).isEqualTo(Phase.ACQUIRING);
        Waiter second = line.enter(LockMode.EXCLUSIVE, null);
        HeldLock first = exclusive("hand-off", 7);
        line.granted(first, 22);
        assertThat(line.phase()).isEqualTo(Phase.HELD);
        first.state(HeldLock.State.RELEASED);
        ReleaseOutcome outcome = line.release(first, HeldLock.State.HELD, false);
        assertThat(outcome.handedOff()).isTrue();
        assertThat(line.phase()).isEqualTo(Phase.TAKING_OVER);
        HeldLock successor = second.turn().join().handedOver();
        assertThat(successor).isSameAs(outcome.successor());
        assertThat(successor.fencingToken()).as("the next token of the reserved block").isEqualTo(8);
        assertThat(line.takenOver(successor).kind()).isEqualTo(TakeOverStep.Kind.READY);
        assertThat(line.phase()).isEqualTo(Phase.HELD);
        successor.state(HeldLock.State.RELEASED);
        ReleaseOutcome inRedis = line.release(successor, HeldLock.State.HELD, false);
        assertThat(inRedis.handedOff()).isFalse();
        assertThat(inRedis.unconfirmed()).as("Redis has not confirmed the lease since the first held it")
                .containsExactly(first);
        assertThat(line.phase()).isEqualTo(Phase.FREE);
    }

    @Test
    void aLossDuringATakeOverKeepsTheWaitersTurnUntilTheTakeOverEnds() {
        KeyLine line = new KeyLine("lost-take-over", RULES);
        line.enter(LockMode.EXCLUSIVE, Thread.currentThread());
        Waiter second = line.enter(LockMode.EXCLUSIVE, null);
        HeldLock first = exclusive("lost-take-over", 7);
        line.granted(first, 7); // no tokens reserved: the successor reserves first
        first.state(HeldLock.State.RELEASED);
        line.release(first, HeldLock.State.HELD, false);
        HeldLock successor = second.turn().join().handedOver();
        assertThat(successor.fencingToken()).isZero();
        Loss loss = line.lost(successor);
        assertThat(loss.tell()).containsExactly(first);
        assertThat(line.phase()).isEqualTo(Phase.TAKE_OVER_LOST);
        TakeOverStep step = line.reservationAnswered(successor, new FenceBlock(30, 45, false), EngineClock.nanoTime());
        assertThat(step.kind()).isEqualTo(TakeOverStep.Kind.GIVE_BACK);
        assertThat(step.tell()).as("told at the loss already").isEmpty();
        assertThat(line.phase()).as("the waiter keeps the turn and asks Redis").isEqualTo(Phase.ACQUIRING);
    }

    @Test
    void closeDuringATakeOverEndsItAndTheKeyClosesWithIt() {
        KeyLine line = new KeyLine("closed-take-over", RULES);
        line.enter(LockMode.EXCLUSIVE, Thread.currentThread());
        Waiter second = line.enter(LockMode.EXCLUSIVE, null);
        HeldLock first = exclusive("closed-take-over", 7);
        line.granted(first, 7);
        first.state(HeldLock.State.RELEASED);
        line.release(first, HeldLock.State.HELD, false);
        HeldLock successor = second.turn().join().handedOver();
        line.close();
        assertThat(line.phase()).isEqualTo(Phase.CLOSING);
        TakeOverStep step = line.reservationTimedOut(successor);
        assertThat(step.kind()).isEqualTo(TakeOverStep.Kind.GIVE_BACK_AFTER_RESERVATION);
        assertThat(step.tell()).containsExactly(first);
        assertThat(line.phase()).isEqualTo(Phase.CLOSED);
    }

    /** The drawing of the states, in docs/how-it-works.md and README.md, has exactly the table's moves. */
    @Test
    void theStateDiagramsShowExactlyTheTable() throws IOException {
        TreeSet<String> table = new TreeSet<>();
        for (String edge : KeyTransitions.edges()) {
            String[] parts = edge.split(": ", 2);
            for (String event : parts[1].split(", ")) {
                table.add(parts[0] + ": " + event);
            }
        }
        for (String document : List.of("docs/how-it-works.md", "README.md")) {
            assertThat(diagramMoves(document)).as("the moves drawn in " + document + "; the table draws as:\n"
                    + String.join("\n", KeyTransitions.edges().stream().map(e -> "    " + e).toList()))
                    .isEqualTo(table);
        }
    }

    @Test
    void everyEventAndPhaseIsInTheTable() {
        String edges = String.join("\n", KeyTransitions.edges());
        for (Event event : Event.values()) {
            assertThat(edges).contains(event.label);
        }
        for (Phase phase : Phase.values()) {
            assertThat(edges).contains(phase + " -->");
        }
    }

    private static final Pattern MOVE = Pattern.compile("^\\s*([A-Z_]+) --> ([A-Z_]+): (.*)$");

    /** "FROM --> TO: event" for each event of each arrow of the document's state diagram (after " - ": a comment). */
    private static TreeSet<String> diagramMoves(String document) throws IOException {
        Path file = root().resolve(document);
        List<String> lines = Files.readAllLines(file);
        int start = lines.indexOf("stateDiagram-v2");
        assertThat(start).as("a state diagram in " + file).isGreaterThanOrEqualTo(0);
        TreeSet<String> moves = new TreeSet<>();
        for (String line : lines.subList(start + 1, lines.size())) {
            if (line.startsWith("```")) {
                break;
            }
            Matcher move = MOVE.matcher(line);
            if (move.matches()) {
                String events = move.group(3).split(" - ", 2)[0];
                for (String event : events.split(",")) {
                    moves.add(move.group(1) + " --> " + move.group(2) + ": " + event.trim());
                }
            }
        }
        return moves;
    }

    private static Path root() {
        Path dir = Path.of("").toAbsolutePath();
        List<Path> tried = new ArrayList<>();
        for (Path at = dir; at != null; at = at.getParent()) {
            tried.add(at);
            if (Files.isRegularFile(at.resolve("docs/how-it-works.md"))) {
                return at;
            }
        }
        throw new IllegalStateException("docs/how-it-works.md not found from " + tried);
    }
}
