# Runnel in a container: the Debian slim image of Node.js 26 (the active LTS), production
# dependencies only, an unprivileged user, the user dir (flows, credentials, installed modules) a
# volume. Build and run:
#   docker build -t runnel .
#   docker run -d --name runnel -p 127.0.0.1:1880:1880 -v runnel-data:/data runnel
# Give it a settings file with adminAuth before publishing the port beyond this host (README:
# "Deployment").

FROM node:26-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
# No dependency has an install script; skipping them also skips `prepare` before src is here.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY src ./src
# tsc, then the editor's files compressed once (dist/editor-precompressed).
RUN npm run prepare

FROM node:26-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force
COPY bin ./bin
COPY --from=build /app/dist ./dist
# The image's `node` user (uid 1000) owns the user dir; npm installs modules there, with its cache.
RUN mkdir /data && chown node:node /data
ENV HOME=/data npm_config_cache=/data/.npm
USER node
VOLUME /data
EXPOSE 1880
# Listening on every interface is what a published port needs; an unauthenticated admin API still
# answers only Host names that are IP addresses, localhost or httpAdminAllowedHosts.
ENTRYPOINT ["node", "bin/runnel.js"]
CMD ["start", "--user-dir", "/data", "--host", "0.0.0.0"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:1880/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
