package dev.leasehold.campaign;

import dev.leasehold.LockHandle;
import dev.leasehold.engine.DefaultLockEngine;
import dev.leasehold.engine.LockEngineSettings;
import dev.leasehold.engine.LockObserver;

/**
 * One instance of the application (a pod): an engine on its own connections behind the nemesis' network
 * faults. The nemesis may shut it down in the middle of anything and start a new one in its place.
 */
final class CampaignInstance {

    final String name;

    private final CampaignServers servers;

    private final LockEngineSettings settings;

    private final History history;

    private volatile ChaosLockServer server;

    private volatile DefaultLockEngine engine;

    /** When each engine that was shut down was, on the history's clock. */
    private final java.util.Map<DefaultLockEngine, Long> closedAt = new java.util.concurrent.ConcurrentHashMap<>();

    private int generation;

    CampaignInstance(String name, CampaignServers servers, LockEngineSettings settings, History history) {
        this.name = name;
        this.servers = servers;
        this.settings = settings;
        this.history = history;
        start();
    }

    synchronized void start() {
        generation++;
        server = new ChaosLockServer(servers.newServer(settings), settings.redisTimeout().toMillis());
        engine = new DefaultLockEngine(server, settings, new LockObserver() {
            @Override
            public void lost(LockHandle handle, String reason) {
                history.lost(name, handle.key(), handle.fencingToken());
            }
        });
    }

    /** Shuts the engine down as a closing application context would, then starts a new one. */
    synchronized void restart() {
        DefaultLockEngine old = engine;
        closedAt.put(old, history.now());
        old.close();
        server.close();
        start();
    }

    DefaultLockEngine engine() {
        return engine;
    }

    ChaosLockServer server() {
        return server;
    }

    /** When the engine {@code used} was shut down (history clock), or -1 when it still runs. */
    long closedAt(DefaultLockEngine used) {
        return closedAt.getOrDefault(used, -1L);
    }

    int generation() {
        return generation;
    }

    void close() {
        engine.close();
        server.close();
    }
}
