# syntax=docker/dockerfile:1
# Anteroom's container image. Three stages:
#   build   - the repository with its dev dependencies; packs the two npm packages exactly as they are
#             published (anteroom-authorizer, anteroom-server: compiled dist/, the built pages);
#   install - installs those tarballs with their production dependencies only, as `npm install` would;
#   runtime - Node 24 and that install, nothing else; runs as the unprivileged `node` user (uid 1000).
# Build: docker build -t anteroom .        Run: docker run -p 8080:8080 -v anteroom-data:/var/lib/anteroom anteroom

ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY . .
RUN npm ci --no-audit --no-fund \
 && mkdir /packages \
 && npm pack -w anteroom-authorizer --pack-destination /packages \
 && npm pack --pack-destination /packages

FROM ${NODE_IMAGE} AS install
WORKDIR /opt/anteroom
COPY --from=build /packages /packages
RUN echo '{"name":"anteroom-install","private":true}' > package.json \
 && npm install --omit=dev --no-audit --no-fund /packages/anteroom-authorizer-*.tgz /packages/anteroom-server-*.tgz \
 && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    ANTEROOM_HOST=0.0.0.0 \
    ANTEROOM_PORT=8080 \
    ANTEROOM_DATA_DIR=/var/lib/anteroom
COPY --from=install /opt/anteroom /opt/anteroom
RUN mkdir -p /var/lib/anteroom && chown node:node /var/lib/anteroom
USER node
WORKDIR /var/lib/anteroom
VOLUME ["/var/lib/anteroom"]
EXPOSE 8080
# Ready = the node answers and its store is reachable (GET /readyz answers 200, else 503).
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.ANTEROOM_PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "/opt/anteroom/node_modules/anteroom-server/bin/anteroom.js"]
CMD ["serve"]
