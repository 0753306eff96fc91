# emqd in a container, for the sidecar use (docs/operations.md).
#
#   docker build -t emqd .
#   podman build --format docker -t emqd .   # the OCI format drops HEALTHCHECK
#   make deb && docker build --build-arg EMQD_DEB=dist/emqd_<version>_amd64.deb -t emqd .
#   docker run --rm -v "$PWD/emqd.yaml:/etc/echomq/emqd.yaml:ro" \
#     -e EMQ_VALKEY_PASSWORD=... emqd
#
# The image holds emqd, emq, the Lua transitions (/usr/share/echomq/lua),
# the emq module (/usr/lib/echomq/emq.so), valkey-server (for
# `valkey.url: embedded`) and a commented example at
# /etc/echomq/emqd.example.yaml; there is no /etc/echomq/emqd.yaml: the
# configuration (valkey.url, password_env, the queues) and the handler
# programs are mounted in. tests/ops/dockerfile_test.cpp checks that every
# file copied here exists and every script run here takes its flags;
# `make image-test` (scripts/image-test.sh) builds the image and runs it.

# --- build: the programs, compiled here or taken from the .deb --------------
# Given EMQD_DEB (a .deb in the context: make deb writes dist/), the build
# stage unpacks it: the programs make test ran and make deb packed, not
# compiled a second time. Without it, the tree is compiled here with the
# same install script as CI.
FROM debian:bookworm-slim AS build
ARG EMQD_DEB=
WORKDIR /src
# The dependencies first, in their own layer: a source change does not
# reinstall them. --build: no test tools (a browser, promtool), which the
# image never runs. None at all for a .deb.
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN if [ -z "$EMQD_DEB" ]; then scripts/install-deps.sh --build && rm -rf /var/lib/apt/lists/*; fi
COPY . .
RUN if [ -n "$EMQD_DEB" ]; then \
      [ -f "$EMQD_DEB" ] || { echo "EMQD_DEB=$EMQD_DEB is not in the build context (make deb writes dist/)" >&2; exit 1; }; \
      dpkg-deb -x "$EMQD_DEB" /out; \
    else \
      cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMQ_BUILD_TESTS=OFF -DEMQ_BUILD_BENCH=OFF -DCMAKE_INSTALL_PREFIX=/usr \
      && cmake --build /build \
      && DESTDIR=/out cmake --install /build; \
    fi

# --- runtime: shared libraries only, a non-root user -----------------------
FROM debian:bookworm-slim
COPY scripts/install-deps.sh /tmp/scripts/install-deps.sh
RUN /tmp/scripts/install-deps.sh --runtime \
 && rm -rf /var/lib/apt/lists/* /tmp/scripts \
 && groupadd --system --gid 10001 emqd \
 && useradd --system --uid 10001 --gid emqd --home-dir /var/lib/emqd --shell /usr/sbin/nologin emqd \
 && install -d -o emqd -g emqd -m 0700 /var/lib/emqd \
 && install -d -m 0755 /etc/echomq

COPY --from=build /out/usr/bin/emqd /out/usr/bin/emq /usr/bin/
COPY --from=build /out/usr/share/echomq/ /usr/share/echomq/
# Where emqd's embedded server looks for it (beside /usr/bin/emqd), and where
# a valkey-server in this image can `--loadmodule` it.
COPY --from=build /out/usr/lib/echomq/emq.so /usr/lib/echomq/emq.so
COPY config/emqd.example.yaml /etc/echomq/emqd.example.yaml

# `valkey.url: embedded` keeps its data here (emqd reads STATE_DIRECTORY as
# systemd would set it); mount a volume on it to keep the data.
ENV STATE_DIRECTORY=/var/lib/emqd
# The port of metrics.listen, for the health check below. The config must
# listen where the probe looks: 127.0.0.1 or 0.0.0.0 at this port.
ENV EMQ_HEALTH_PORT=9464
VOLUME /var/lib/emqd
EXPOSE 9464

# Numeric, so that Kubernetes' runAsNonRoot can verify it.
USER 10001:10001
WORKDIR /var/lib/emqd

# bash's /dev/tcp: no curl in the image. 200 from /healthz, or unhealthy.
# Only the Docker image format holds it: podman and buildah need
# `--format docker` (make image-test builds so and runs this command).
# Kubernetes ignores it and probes what the pod spec says (docs/operations.md).
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${EMQ_HEALTH_PORT} && printf 'GET /healthz HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && read -r -t 4 _ code _ <&3 && [ \"$code\" = 200 ]"]

# SIGTERM drains: give `docker stop -t` more than shutdown.drain_timeout_s.
STOPSIGNAL SIGTERM
ENTRYPOINT ["emqd"]
CMD ["--config", "/etc/echomq/emqd.yaml"]
