# Herald's container image: `docker build -t herald .`, then
#   docker run -p 3000:3000 -v herald-data:/data herald
# The data directory /data holds the SQLite database and the generated server
# secret; give HERALD_DATABASE_URL (postgres://…) and HERALD_SECRET to run on
# PostgreSQL instead (deploy/compose.yaml). docs/operations.md has the rest.

# The builder's Go is go.mod's (deploy/deploy_test.go checks they agree).
FROM --platform=$BUILDPLATFORM golang:1.26.8 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
ARG TARGETOS TARGETARCH
ARG VERSION=dev
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags "-s -w -X main.version=$VERSION" -o /out/herald ./cmd/herald
# The data directory, owned by the final stage's user: a new named volume
# mounted on /data takes this owner.
RUN mkdir -p /out/root/data && chmod 0700 /out/root/data

# distroless/static: CA certificates, tzdata, /etc/passwd's nonroot (65532);
# no shell, no package manager.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/herald /herald
COPY --from=build --chown=65532:65532 /out/root/ /
ENV HERALD_ADDR=0.0.0.0:3000 \
    HERALD_DATA_DIR=/data
USER 65532:65532
EXPOSE 3000
VOLUME /data
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 CMD ["/herald", "healthcheck"]
ENTRYPOINT ["/herald"]
CMD ["serve"]
