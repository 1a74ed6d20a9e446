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
EXPOSE 4222 6222 8222
ENTRYPOINT ["nats-server"]
CMD ["--jetstream", "--store_dir=/data", "--http_port=8222"]
