# NATS with JetStream from Debian's nats-server package, for sites that cannot pull nats:*.
# Debian bookworm ships 2.9: no `sync_interval` (see deploy/compose/nats-embedded.conf).
#
#   podman build -f deploy/docker/bases/nats.Dockerfile -t memex.local/nats:2.9-bookworm .

ARG DEBIAN_IMAGE=memex.local/debian:bookworm
FROM ${DEBIAN_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends nats-server \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /data && chown 10001:10001 /data
USER 10001:10001
# Ports: 4222 clients, 6222 routes, 8222 monitoring. Not EXPOSEd: podman's Docker API reports an
# exposed but unpublished port as an unbound binding, and testcontainers then waits for it forever.
ENTRYPOINT ["nats-server"]
CMD ["--jetstream", "--store_dir=/data", "--http_port=8222"]
