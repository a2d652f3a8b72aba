# One image per Meridian service, parametrised by the service: `SERVICE` is one of services/* (gateway included) or
# payment-simulator. scripts/images builds every one of them; by hand:
#
#   docker build --build-arg SERVICE=order --build-arg PORT=3002 -t meridian/order:0.1.0 .
#
# Stage 1 installs the workspace from the lockfile and runs `./scripts/build`: for each service, built JavaScript and
# only its production dependencies in build/<service>. Stage 2 is that folder on a slim Node base, run by node itself as
# an unprivileged user; migrations are the same image with `node dist/migrate.js` as its command.
ARG BUILD_BASE=node:24-bookworm-slim
ARG RUNTIME_BASE=node:24-bookworm-slim

# The manifests alone, so the dependency layer below is rebuilt only when a manifest or the lockfile changes.
FROM ${BUILD_BASE} AS manifests
WORKDIR /src
COPY . .
RUN find . -name node_modules -prune -o \( -name package.json -o -name pnpm-lock.yaml -o -name pnpm-workspace.yaml -o -name .npmrc \) -print \
    | tar -cf /manifests.tar -T - && mkdir /manifests && tar -xf /manifests.tar -C /manifests

FROM ${BUILD_BASE} AS build
ARG PNPM_VERSION=10.34.8
# NODE_EXTRA_CA_CERTS: a machine behind a TLS-inspecting proxy hands its CA bundle in as the build secret `extra-ca`
# (scripts/images does); it is mounted for the downloading steps only and is in no layer
ENV CI=true PNPM_HOME=/pnpm PATH=/pnpm:$PATH TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1
RUN --mount=type=secret,id=extra-ca NODE_EXTRA_CA_CERTS=/run/secrets/extra-ca npm install --global --no-fund --no-audit --loglevel=error "pnpm@${PNPM_VERSION}"
WORKDIR /src
COPY --from=manifests /manifests/ ./
COPY patches/ patches/
# every workspace's dependencies, shared by all the services' builds (a cache mount keeps the store between builds)
RUN --mount=type=cache,id=meridian-pnpm-store,target=/pnpm/store --mount=type=secret,id=extra-ca \
    pnpm config set store-dir /pnpm/store && NODE_EXTRA_CA_CERTS=/run/secrets/extra-ca pnpm install --frozen-lockfile
COPY . .
RUN --mount=type=cache,id=meridian-pnpm-store,target=/pnpm/store \
    pnpm install --frozen-lockfile --offline
# every service at once, or those BUILD_TARGETS names (scripts/images names the images it builds: the others are kept,
# made from the same inputs): this layer is the same for all the images of one build, so building the ten images
# builds once and each image then only copies its folder
# (MERIDIAN_BUILD_CACHE=off: the builds are not kept in a cache folder too, which would only grow the layer)
ARG BUILD_TARGETS=
RUN --mount=type=cache,id=meridian-pnpm-store,target=/pnpm/store --mount=type=secret,id=extra-ca \
    MERIDIAN_BUILD_CACHE=off NODE_EXTRA_CA_CERTS=/run/secrets/extra-ca ./scripts/build ${BUILD_TARGETS}

FROM ${RUNTIME_BASE}
ARG SERVICE
RUN ["node", "-e", "process.env.SERVICE || (console.error('build with --build-arg SERVICE=<service>'), process.exit(1))"]
ARG PORT
ARG VERSION=0.0.0
ARG REVISION=unknown
ARG SOURCE=
# the gateway's: its build's copy of the console, served at /console/ (empty for the others)
ARG CONSOLE_DIR=
LABEL org.opencontainers.image.title="meridian-${SERVICE}" \
      org.opencontainers.image.description="Meridian ${SERVICE} service" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="UNLICENSED"
# 8 MB semi-spaces: V8 otherwise keeps a 64 MB young generation at idle (docs/how-to/deploying.md, Production build)
ENV NODE_ENV=production PORT=${PORT} HOME=/tmp NODE_OPTIONS=--max-semi-space-size=8 CONSOLE_DIR=${CONSOLE_DIR}
WORKDIR /app
# owned by root and not writable by the service: the root filesystem may be read-only (it writes nowhere but /tmp)
COPY --from=build /src/build/${SERVICE}/ /app/
USER 10001:10001
EXPOSE ${PORT}
# liveness: the process answers; readiness (/health/ready) is for the orchestrator's own probe
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/health/live`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node is PID 1 and receives SIGTERM itself: the service drains (readiness off, Consul deregistration, in-flight
# requests finished) for up to 30 s, so give `docker stop` a longer timeout than that. No entrypoint (the official
# base's shell script is set aside too): the command is the whole command line, `node dist/migrate.js` migrates.
# dist/main.js turns source maps on itself, so stack traces name the TypeScript lines.
STOPSIGNAL SIGTERM
ENTRYPOINT []
CMD ["node", "dist/main.js"]
