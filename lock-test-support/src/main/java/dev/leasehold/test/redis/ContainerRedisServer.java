package dev.leasehold.test.redis;

import java.time.Duration;
import java.util.List;

import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

/** {@code redis:7-alpine} through Testcontainers, bound to a fixed host port so a restart keeps its address. */
final class ContainerRedisServer implements TestRedisServer {

    static final DockerImageName IMAGE = DockerImageName.parse("redis:7-alpine");

    private final int port;

    private final GenericContainer<?> container;

    @SuppressWarnings("resource")
    ContainerRedisServer(int port, List<String> extraArgs) {
        this.port = port;
        List<String> command = new java.util.ArrayList<>(List.of("redis-server", "--save", "", "--appendonly", "no"));
        command.addAll(extraArgs);
        this.container = new GenericContainer<>(IMAGE).withExposedPorts(6379)
            .withCommand(command.toArray(String[]::new))
            .withCreateContainerCmdModifier(cmd -> cmd.withHostConfig(HostConfig.newHostConfig()
                .withPortBindings(new PortBinding(Ports.Binding.bindIpAndPort("127.0.0.1", port), ExposedPort.tcp(6379)))));
    }

    static boolean dockerAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        }
        catch (Throwable ex) {
            return false;
        }
    }

    @Override
    public String kind() {
        return "testcontainers";
    }

    @Override
    public String host() {
        return "127.0.0.1";
    }

    @Override
    public int port() {
        return port;
    }

    @Override
    public String url() {
        return "redis://127.0.0.1:" + port;
    }

    @Override
    public boolean controllable() {
        return true;
    }

    @Override
    public synchronized void start() {
        if (container.getContainerId() == null) {
            container.start();
        }
        else {
            container.getDockerClient().startContainerCmd(container.getContainerId()).exec();
        }
        RespClient.awaitPing(host(), port, Duration.ofSeconds(30));
    }

    @Override
    public synchronized void stop() {
        if (container.getContainerId() != null) {
            // a kill, not a graceful shutdown: the point is to simulate a crash
            container.getDockerClient().killContainerCmd(container.getContainerId()).exec();
        }
    }

    @Override
    public void pause() {
        container.getDockerClient().pauseContainerCmd(container.getContainerId()).exec();
    }

    @Override
    public void resume() {
        container.getDockerClient().unpauseContainerCmd(container.getContainerId()).exec();
    }

    @Override
    public void close() {
        container.stop();
    }
}
