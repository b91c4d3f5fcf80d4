# krc container image: built on Debian bookworm-slim, run from scratch (no shell).
#   docker build -t krc .
# Every RUN calls scripts/image-build, and tests/image/test_image.py executes these
# instructions in a debootstrapped Debian root: keep both in step (the test checks it).
# Contents, read-only root, volume: docs/image.md.
# The base image is pinned by digest (the multi-architecture index of
# debian:bookworm-20261005-slim, Debian 12.15); docs/image.md says how to move it.

FROM debian:bookworm-slim@sha256:7c7b2c966bc9ee8cedfeef67e0e279108992c77681fa595db4a9d65c06ccc587 AS build
COPY scripts/image-build /usr/local/sbin/image-build
RUN ["/usr/local/sbin/image-build", "deps"]
COPY . /src
RUN ["/usr/local/sbin/image-build", "build", "/src", "/build"]
RUN ["/usr/local/sbin/image-build", "rootfs", "/src", "/build", "/rootfs"]

FROM scratch
ARG KRC_VERSION=0.1.0
ARG KRC_REVISION=unknown
# Ownership is kept when copying between stages (/var/lib/krc belongs to 65532).
COPY --from=build /rootfs/ /
LABEL org.opencontainers.image.title="krc" \
      org.opencontainers.image.description="kube-restart-collector: tells you why a Kubernetes container restarted" \
      org.opencontainers.image.version="${KRC_VERSION}" \
      org.opencontainers.image.revision="${KRC_REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV KRC_DB=/var/lib/krc/krc.db
USER 65532:65532
WORKDIR /var/lib/krc
VOLUME ["/var/lib/krc"]
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/krc"]
CMD ["run"]
