package dev.leasehold.explorer;

import java.lang.reflect.Field;
import java.util.concurrent.locks.AbstractQueuedSynchronizer;

/**
 * Whether a parked thread was woken but has not run yet (its state still says WAITING): for a wait on a
 * condition (a blocking queue's take), its node moved to the lock's queue; for a wait on a CompletableFuture, the
 * future cleared the waiter's thread; for a wait on a lock (a queue's take lock, or the lock a signalled condition
 * waiter takes back before it returns), the lock is free, so the queued thread takes it as soon as it runs. Read by
 * reflection where the JVM opens java.util.concurrent (the explorer's
 * surefire execution does); elsewhere it answers "not woken" and the explorer relies on a longer quiet spell.
 */
final class Wakeups {

    private static final Field CONDITION_OWNER = field("java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject", "this$0");

    private static final Field SIGNALLER_THREAD = field("java.util.concurrent.CompletableFuture$Signaller", "thread");

    private static final java.lang.reflect.Method LOCK_STATE = method(AbstractQueuedSynchronizer.class, "getState");

    static final boolean AVAILABLE = CONDITION_OWNER != null && SIGNALLER_THREAD != null && LOCK_STATE != null;

    private Wakeups() {
    }

    private static java.lang.reflect.Method method(Class<?> type, String name) {
        try {
            java.lang.reflect.Method method = type.getDeclaredMethod(name);
            method.setAccessible(true);
            return method;
        }
        catch (ReflectiveOperationException | RuntimeException ex) {
            return null;
        }
    }

    private static Field field(String className, String name) {
        try {
            Field field = Class.forName(className).getDeclaredField(name);
            field.setAccessible(true);
            return field;
        }
        catch (ReflectiveOperationException | RuntimeException ex) {
            return null;
        }
    }

    static boolean woken(Thread thread, Object blocker) {
        if (blocker == null || !AVAILABLE) {
            return false;
        }
        try {
            if (blocker.getClass() == CONDITION_OWNER.getDeclaringClass()) {
                return ((AbstractQueuedSynchronizer) CONDITION_OWNER.get(blocker)).isQueued(thread);
            }
            if (blocker.getClass() == SIGNALLER_THREAD.getDeclaringClass()) {
                return SIGNALLER_THREAD.get(blocker) == null;
            }
            if (blocker instanceof AbstractQueuedSynchronizer lock) {
                // unparked by the unlock, or about to be: it says WAITING until it runs (seen as runs that did not
                // replay across JVMs on a busy machine, a caller's step recorded after the explorer's next step)
                return (int) LOCK_STATE.invoke(lock) == 0 && lock.isQueued(thread);
            }
        }
        catch (ReflectiveOperationException ex) {
            return false;
        }
        return false;
    }
}
