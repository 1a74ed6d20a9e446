# Builds every Memex image, sharing the stages of base.Dockerfile:
#
#   docker buildx bake -f deploy/docker/docker-bake.hcl --load            # all five images
#   docker buildx bake -f deploy/docker/docker-bake.hcl indexer --load \
#     --set indexer.args.EMBEDDING_MODEL=Xenova/all-MiniLM-L6-v2           # another baked-in model
#
# Run it from the repository root (the build context). Tags: ${MEMEX_REGISTRY}/memex-<name>:${MEMEX_TAG},
# by default memex.local/memex-gateway:dev and so on; set MEMEX_REGISTRY to your registry and add
# --push to publish. The variables below can also be set from the environment.

variable "MEMEX_REGISTRY" {
  default = "memex.local"
}

variable "MEMEX_TAG" {
  default = "dev"
}

# Node LTS base image of every stage. Mirror it for air-gapped builders.
variable "NODE_IMAGE" {
  default = "node:22-bookworm-slim"
}

variable "PNPM_VERSION" {
  default = "10.34.8"
}

# The npm registry pnpm and the packages come from; an air-gapped site's mirror.
variable "NPM_REGISTRY" {
  default = "https://registry.npmjs.org/"
}

# The embedding model baked into the indexer image (see indexer.Dockerfile).
variable "EMBEDDING_MODEL" {
  default = "memex-glove-100d"
}

variable "EXTRA_EMBEDDING_MODELS" {
  default = ""
}

group "default" {
  targets = ["gateway", "memo", "indexer", "agent", "cli"]
}

# The two shared stages. Not tagged: the service targets consume them as named contexts, so they
# are built once per bake run and their layers are reused by every image.
target "base-runtime" {
  context    = "."
  dockerfile = "deploy/docker/base.Dockerfile"
  target     = "runtime"
  args = {
    NODE_IMAGE   = NODE_IMAGE
    PNPM_VERSION = PNPM_VERSION
    NPM_REGISTRY = NPM_REGISTRY
  }
}

target "base-build" {
  inherits = ["base-runtime"]
  target   = "workspace"
}

target "_service" {
  context = "."
  contexts = {
    memex-runtime = "target:base-runtime"
    memex-build   = "target:base-build"
  }
  labels = {
    "org.opencontainers.image.description" = "Memex: self-hosted knowledge base"
  }
}

target "gateway" {
  inherits   = ["_service"]
  dockerfile = "deploy/docker/gateway.Dockerfile"
  tags       = ["${MEMEX_REGISTRY}/memex-gateway:${MEMEX_TAG}"]
}

target "memo" {
  inherits   = ["_service"]
  dockerfile = "deploy/docker/memo.Dockerfile"
  tags       = ["${MEMEX_REGISTRY}/memex-memo:${MEMEX_TAG}"]
}

target "indexer" {
  inherits   = ["_service"]
  dockerfile = "deploy/docker/indexer.Dockerfile"
  tags       = ["${MEMEX_REGISTRY}/memex-indexer:${MEMEX_TAG}"]
  args = {
    EMBEDDING_MODEL        = EMBEDDING_MODEL
    EXTRA_EMBEDDING_MODELS = EXTRA_EMBEDDING_MODELS
  }
}

target "agent" {
  inherits   = ["_service"]
  dockerfile = "deploy/docker/agent.Dockerfile"
  tags       = ["${MEMEX_REGISTRY}/memex-agent:${MEMEX_TAG}"]
}

target "cli" {
  inherits   = ["_service"]
  dockerfile = "deploy/docker/cli.Dockerfile"
  tags       = ["${MEMEX_REGISTRY}/memex-cli:${MEMEX_TAG}"]
}
