# syntax=docker/dockerfile:1
# Images of pressure-agent and pressure-janitor for people who build with Docker (or buildah,
# podman, kaniko). Without Docker, `make images` writes the same single-binary images with
# hack/imagebuild. Build one component per image:
#
#   docker build --build-arg COMPONENT=pressure-agent   --build-arg VERSION=<tag> -t <registry>/pressure-agent:<tag> .
#   docker build --build-arg COMPONENT=pressure-janitor --build-arg VERSION=<tag> -t <registry>/pressure-janitor:<tag> .
#
# Without VERSION the binaries report v0.0.0-dev (--version).
#
# Multi-arch: docker buildx build --platform linux/amd64,linux/arm64 ... (cross-compiled in the
# builder stage, no emulation).
ARG GO_VERSION=1.26.8

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
ARG COMPONENT=pressure-agent
ARG VERSION=v0.0.0-dev
ARG COMMIT=unknown
ARG TARGETOS=linux
ARG TARGETARCH
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY cmd/ cmd/
COPY internal/ internal/
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath \
      -ldflags "-s -w -X github.com/kube-pressure/pressure/internal/version.Version=${VERSION} -X github.com/kube-pressure/pressure/internal/version.Commit=${COMMIT}" \
      -o /out/${COMPONENT} ./cmd/${COMPONENT}

# A static binary needs no libc: distroless/static has only CA certificates, tzdata and
# /etc/passwd. Both run as the image's unprivileged user 65532 (as hack/imagebuild's images do);
# the chart switches the agent to root with CAP_KILL only for the cgroup-kill rung.
FROM gcr.io/distroless/static-debian12:nonroot
ARG COMPONENT=pressure-agent
# ENTRYPOINT (exec form) cannot expand a build arg: the binary goes to one fixed path.
COPY --from=build /out/${COMPONENT} /entrypoint
USER 65532:65532
ENTRYPOINT ["/entrypoint"]
