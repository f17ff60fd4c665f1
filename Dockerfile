# The depotd image the Helm chart runs (helm/depot: image.repository, tag = the chart's appVersion):
# Debian 12 slim plus the Debian package, installed by packaging/install-deb, the script the package
# test runs in a debootstrap chroot (scripts/test package), with the same arguments. Nothing else.
#
#   scripts/package && docker build -t depot:0.1.0 .
FROM debian:12-slim
ARG DEPOT_VERSION=0.1.0
COPY build/package/depot_${DEPOT_VERSION}_amd64.deb packaging/install-deb /tmp/
RUN /tmp/install-deb /tmp/depot_${DEPOT_VERSION}_amd64.deb 10001 \
    && rm -rf /tmp/install-deb /tmp/depot_*.deb /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
# The depot user the package created (uid and gid 10001, the chart's runAsUser).
USER 10001:10001
WORKDIR /var/lib/depot
ENV DEPOT_LISTEN=0.0.0.0:9000 DEPOT_BLOB_DIR=/var/lib/depot/blobs
EXPOSE 9000
CMD ["depotd"]
