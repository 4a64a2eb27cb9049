# The leasehold container image, for those who build with Docker (BuildKit):
#
#   docker buildx build --platform linux/amd64,linux/arm64 --build-arg VERSION=v1.2.3 -t leasehold:v1.2.3 .
#
# It is what scripts/image builds without a daemon: on an empty base, the static binary as
# /leasehold (the entry point), Mozilla's CA roots in /etc/ssl/certs/ca-certificates.crt (go run
# ./scripts/cabundle), /etc/passwd and /etc/group with root and nonroot (65532), /home/nonroot
# (the working directory) and /tmp; it runs as 65532:65532. Use it as a container's entry point:
#
#   ENTRYPOINT ["/leasehold", "run", "--"]  /  command: ["/leasehold", "run", "--", "/app/worker"]
#
# or copy the binary into an image of your own:
#
#   COPY --from=REGISTRY/leasehold:v1.2.3 /leasehold /usr/local/bin/leasehold

FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS TARGETARCH
ARG VERSION=v0.0.0-docker
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The flags and build tags of scripts/release.
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -tags "$(cat scripts/release-tags)" -trimpath -buildvcs=false \
      -ldflags="-s -w -X main.stampedVersion=$VERSION" -o /rootfs/leasehold ./cmd/leasehold
RUN mkdir -p /rootfs/etc/ssl/certs /rootfs/home/nonroot /rootfs/tmp \
 && go run ./scripts/cabundle >/rootfs/etc/ssl/certs/ca-certificates.crt \
 && printf 'root:x:0:\nnonroot:x:65532:\n' >/rootfs/etc/group \
 && printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >/rootfs/etc/passwd \
 && chmod 0700 /rootfs/home/nonroot && chown 65532:65532 /rootfs/home/nonroot && chmod 1777 /rootfs/tmp

FROM scratch
COPY --from=build /rootfs/ /
USER 65532:65532
WORKDIR /home/nonroot
ENTRYPOINT ["/leasehold"]
ARG VERSION=v0.0.0-docker
LABEL org.opencontainers.image.title=leasehold \
      org.opencontainers.image.version=$VERSION \
      org.opencontainers.image.source=https://github.com/leasehold/leasehold
