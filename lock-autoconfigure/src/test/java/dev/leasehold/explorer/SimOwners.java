package dev.leasehold.explorer;

/**
 * owner.lua on the simulated Redis: who owns a lock's value ('token@last fencing token', or 'token#last' for a quiet
 * grant: nobody queued, so its release need not look at the queue).
 */
final class SimOwners {

    private SimOwners() {
    }

    /** The owner's last fencing token recorded in {@code value} (0: none recorded), null when {@code token} does not own it. */
    static Long lastFence(String value, String token) {
        if (value == null || !value.startsWith(token)) {
            return null;
        }
        if (value.length() == token.length()) {
            return 0L;
        }
        if (value.charAt(token.length()) != '@' && value.charAt(token.length()) != '#') {
            return null;
        }
        return Long.parseLong(value.substring(token.length() + 1));
    }

    /** A quiet grant's value ('token#last'): nobody queued, so its release need not look at the queue. */
    static boolean quiet(String value, String token) {
        return value.length() > token.length() && value.charAt(token.length()) == '#';
    }

    /** noisyValue: a quiet grant's value in the '@' form, or null. */
    static String noisyValue(String value) {
        int at = value == null ? -1 : value.lastIndexOf('#');
        return at < 0 || !value.substring(at + 1).matches("\\d+") ? null
                : value.substring(0, at) + "@" + value.substring(at + 1);
    }
}
