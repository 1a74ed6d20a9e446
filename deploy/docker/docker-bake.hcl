# Builds every Memex image with Docker, sharing the stages of base.Dockerfile. `pnpm images` runs
# it (passing SERVICES from deploy/services.json and the base it chose); by hand, from the
# repository root:
#
#   docker buildx bake -f deploy/docker/docker-bake.hcl --load            # all images
#   docker buildx bake -f deploy/docker/docker-bake.hcl service-indexer --load \
#     --set service-indexer.args.EMBEDDING_MODEL=Xenova/all-MiniLM-L6-v2   # another baked-in model
#
# Tags: ${MEMEX_REGISTRY}/memex-<name>:${MEMEX_TAG} (default memex.local/memex-gateway:dev, …) and
# ${MEMEX_REGISTRY}/memex:${MEMEX_TAG} for the standalone image; add --push to publish. A
# registry behind its own CA: --set '*.secrets=id=ca,src=<CA bundle>'.

variable "MEMEX_REGISTRY" {
  default = "memex.local"
}

variable "MEMEX_TAG" {
  default = "dev"
}

# The services of deploy/services.json (pnpm images passes the list from there).
variable "SERVICES" {
  default = ["gateway", "memo", "indexer", "agent", "extractor"]
}

# Node LTS base of every stage; memex.local/node:<version>-bookworm for local bases (pnpm images).
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

# The embedding model baked into the indexer and standalone images.
variable "EMBEDDING_MODEL" {
  default = "memex-glove-100d"
}

variable "EXTRA_EMBEDDING_MODELS" {
  default = ""
}

group "default" {
  targets = ["service", "cli", "memex"]
}

# The two shared stages. Not tagged: the images consume them as named contexts, so they are
# built once per bake run and their layers are reused by every image.
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

target "_image" {
  context = "."
  contexts = {
    memex-runtime = "target:base-runtime"
    memex-build   = "target:base-build"
  }
  labels = {
    "org.opencontainers.image.description" = "Memex: self-hosted knowledge base"
  }
  args = {
    EMBEDDING_MODEL        = EMBEDDING_MODEL
    EXTRA_EMBEDDING_MODELS = EXTRA_EMBEDDING_MODELS
  }
}

# One image per service: service-gateway, service-memo, ...
target "service" {
  name       = "service-${svc}"
  matrix     = { svc = SERVICES }
  inherits   = ["_image"]
  dockerfile = svc == "indexer" ? "deploy/docker/indexer.Dockerfile" : "deploy/docker/service.Dockerfile"
  args       = { SERVICE = svc, EMBEDDING_MODEL = EMBEDDING_MODEL, EXTRA_EMBEDDING_MODELS = EXTRA_EMBEDDING_MODELS }
  tags       = ["${MEMEX_REGISTRY}/memex-${svc}:${MEMEX_TAG}"]
}

target "cli" {
  inherits   = ["_image"]
  dockerfile = "deploy/docker/cli.Dockerfile"
  tags       = ["${MEMEX_REGISTRY}/memex-cli:${MEMEX_TAG}"]
}

target "memex" {
  inherits   = ["_image"]
  dockerfile = "deploy/docker/memex.Dockerfile"
  tags       = ["${MEMEX_REGISTRY}/memex:${MEMEX_TAG}"]
}
