package dev.leasehold.explorer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.leasehold.engine.server.LockKeys;
import dev.leasehold.engine.server.LockServerException;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;

/**
 * A simulated Redis Cluster of a few masters over one {@link SimRedis}, which holds the data of every slot (each key
 * lives on exactly one master: the union of the masters' data is one server's): which master serves each slot (split
 * evenly, as {@code TestRedisCluster} and {@code redis-cli --cluster create} split them), and a slot's migration from
 * its master to another (MIGRATING on the source, IMPORTING on the target), which moves the slot's locks one at a time.
 * What a node sees of a key is the data where that key lives now. Routing follows Redis's {@code getNodeByQuery}: a key
 * of a migrating slot is served by the source while it is there, else answered ASK; a command that came with ASKING to
 * the importing node is served there for that slot's keys (one not moved yet reads as absent: the trap of issue 31's
 * defect 5); a multi-key command whose keys are split answers TRYAGAIN; anything else is served by the slot's master or
 * answered MOVED. Inside a script, a key the node does not serve is an error the script may catch
 * ({@code redis.pcall}). The scripts a migration matters to are mirrored here step for step: renew_exclusive_node.lua
 * ({@link #renewOnNode}) and renew_exclusive_many.lua ({@link #renewBatchOn}). Runs on the explorer's thread only.
 * <p>
 * Not modelled: a lock's own keys (lock, fence, queue, readers) split by the migration (they move together, a lock at a
 * time, so its multi-key scripts never see them split), and keys created while their slot migrates (they are created
 * where their lock's keys are: the source until they moved).
 */
final class SimCluster {

    static final int SLOTS = 16384;

    /** renew_exclusive_node.lua's answer for a further lock absent on the node (RenewalBatches.ABSENT_HERE). */
    static final long ABSENT_HERE = -2L;

    /** Where a node sends a command it does not serve: ASK (once, with ASKING) or MOVED (the slot's master). */
    record Redirect(boolean ask, int node, int slot) {

        @Override
        public String toString() {
            return (ask ? "ASK m" : "MOVED m") + node;
        }
    }

    final int masters;

    final SimRedis data;

    /** Slots whose master is no longer the one of the even split (a finished migration). */
    private final Map<Integer, Integer> handedOver = new HashMap<>();

    /** The lock names of every key of the run, by their lock key (the scripts name locks by their Redis keys). */
    private final Map<String, LockKeys> byLockKey = new HashMap<>();

    /** The slot in migration, -1 when none; its source and target masters. */
    private int migrating = -1;

    private int source;

    private int target;

    /** The locks (logical keys) of the migrating slot whose keys have moved to the target, and those still to move. */
    private final Set<String> moved = new HashSet<>();

    private final List<String> toMove = new ArrayList<>();

    SimCluster(int masters, SimRedis data, List<String> keys) {
        this.masters = masters;
        this.data = data;
        keys.forEach(key -> byLockKey.put(names(key).lock(), names(key)));
    }

    static LockKeys names(String key) {
        return LockKeys.of("lock:", key);
    }

    static int slot(String redisKey) {
        return ClusterSlotHashUtil.calculateSlot(redisKey);
    }

    /** The master of a slot in the even split, before any migration. */
    static int initialMaster(int slot, int masters) {
        return Math.min(slot / (SLOTS / masters), masters - 1);
    }

    /** The master that owns the slot now (a migrating slot: still its source until the migration ends). */
    int masterOf(int slot) {
        return handedOver.getOrDefault(slot, initialMaster(slot, masters));
    }

    /** The slot's master as every node says it (CLUSTER SLOTS): what a client learns on a refresh. */
    Map<Integer, Integer> handedOver() {
        return Map.copyOf(handedOver);
    }

    /** Where a lock's keys live now. */
    int nodeOf(LockKeys keys) {
        int slot = slot(keys.lock());
        if (slot == migrating) {
            return moved.contains(keys.logicalKey()) ? target : source;
        }
        return masterOf(slot);
    }

    /** The lock's value as {@code node} sees it: null where its keys do not live. */
    private String visible(int node, String lockKey) {
        LockKeys keys = byLockKey.get(lockKey);
        return keys == null || nodeOf(keys) != node ? null : data.lockValue(keys);
    }

    // ---- the migration (the explorer's steps: ClusterRun)

    boolean migrating() {
        return migrating >= 0;
    }

    int migratingSlot() {
        return migrating;
    }

    /** CLUSTER SETSLOT IMPORTING on the target, MIGRATING on the source; {@code order}: the locks as MIGRATE takes them. */
    void startMigration(int slot, int to, List<String> order) {
        migrating = slot;
        source = masterOf(slot);
        target = to;
        moved.clear();
        toMove.clear();
        toMove.addAll(order);
    }

    /** MIGRATE of the next lock's keys to the target; the lock moved, or null when every lock has moved. */
    String moveNext() {
        if (toMove.isEmpty()) {
            return null;
        }
        String key = toMove.remove(0);
        moved.add(key);
        return key;
    }

    boolean allMoved() {
        return toMove.isEmpty();
    }

    /** CLUSTER SETSLOT NODE on every master: the target owns the slot (clients still routing to the source get MOVED). */
    void finishMigration() {
        handedOver.put(migrating, target);
        migrating = -1;
        moved.clear();
    }

    String describeMigration() {
        return "slot " + migrating + " from m" + source + " to m" + target + ", moved " + moved + ", to move " + toMove;
    }

    // ---- routing (getNodeByQuery)

    /** How {@code node} routes a command or a script's call on one key: null when it serves it, else the redirect. */
    Redirect route(int node, String redisKey, boolean asking) {
        int slot = slot(redisKey);
        if (slot == migrating) {
            if (node == source) {
                return visible(node, redisKey) != null ? null : new Redirect(true, target, slot);
            }
            return node == target && asking ? null : new Redirect(false, source, slot);
        }
        int master = masterOf(slot);
        return master == node ? null : new Redirect(false, master, slot);
    }

    // ---- the scripts a migration matters to

    /**
     * renew_exclusive_node.lua on {@code node}: the redirect of its one declared key, or a 1 (renewed), 0 (gone or
     * another owner's), -1 (not served here: the script's pcall caught Redis's refusal) or -2 (a further lock absent
     * here) per lock; {@code args}: the lease, the first lock's token, then lock and token pairs.
     */
    Object renewOnNode(int node, boolean asking, String firstKey, List<String> args) {
        Redirect redirect = route(node, firstKey, asking);
        if (redirect != null) {
            return redirect;
        }
        long lease = Long.parseLong(args.get(0));
        List<Long> renewed = new ArrayList<>();
        renewed.add(renewHere(node, asking, firstKey, args.get(1), true, lease));
        for (int i = 2; i + 1 < args.size(); i += 2) {
            renewed.add(renewHere(node, asking, args.get(i), args.get(i + 1), false, lease));
        }
        return renewed;
    }

    /** The script's {@code renew(key, token, declared)}. */
    private long renewHere(int node, boolean asking, String lockKey, String token, boolean declared, long lease) {
        if (route(node, lockKey, asking) != null) {
            return -1;
        }
        String value = visible(node, lockKey);
        if (SimOwners.lastFence(value, token) != null) {
            data.renew(byLockKey.get(lockKey), false, token, lease);
            return 1;
        }
        if (value == null && !declared) {
            return ABSENT_HERE;
        }
        return 0;
    }

    /**
     * renew_exclusive_many.lua on {@code node} with its keys declared (one slot): the redirect, Redis's TRYAGAIN
     * (returned, as the reply an error is) where the slot migrates and the keys are split or missing, or a 1 or 0 per
     * key; {@code args}: the lease, then each key's token.
     */
    Object renewBatchOn(int node, boolean asking, List<String> lockKeys, List<String> args) {
        int slot = slot(lockKeys.get(0));
        long missing = lockKeys.stream().filter(key -> visible(node, key) == null).count();
        if (slot == migrating && node == source && missing > 0) {
            return missing < lockKeys.size() ? tryAgain(lockKeys) : new Redirect(true, target, slot);
        }
        if (slot == migrating && node == target && asking) {
            if (lockKeys.size() > 1 && missing > 0) {
                return tryAgain(lockKeys);
            }
        }
        else {
            Redirect redirect = route(node, lockKeys.get(0), asking);
            if (redirect != null) {
                return redirect;
            }
        }
        long lease = Long.parseLong(args.get(0));
        List<Long> renewed = new ArrayList<>();
        for (int i = 0; i < lockKeys.size(); i++) {
            String token = args.get(i + 1);
            boolean owned = SimOwners.lastFence(visible(node, lockKeys.get(i)), token) != null;
            if (owned) {
                data.renew(byLockKey.get(lockKeys.get(i)), false, token, lease);
            }
            renewed.add(owned ? 1L : 0L);
        }
        return renewed;
    }

    private static LockServerException tryAgain(List<String> keys) {
        return new LockServerException(LockServerException.Kind.REFUSED,
                "simulated: TRYAGAIN Multiple keys request during rehashing of slot " + slot(keys.get(0)), null);
    }
}
