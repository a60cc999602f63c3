# Multi-stage image: dependencies installed once, runtime as a non-root user on Node 24.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY gateway/package.json gateway/package.json
COPY operator/package.json operator/package.json
COPY ui/package.json ui/package.json
# The `node` devDependency is not needed in the image (the base image is Node 24).
RUN npm ci --omit=dev --no-audit --no-fund

# The dashboard: built with the dev dependencies (Vite, TypeScript), only its static files go into the image.
FROM node:24-bookworm-slim AS ui
WORKDIR /app
COPY package.json package-lock.json ./
COPY gateway/package.json gateway/package.json
COPY operator/package.json operator/package.json
COPY ui/package.json ui/package.json
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY ui ./ui
# The image's Node runs the build (the `node` devDependency is not installed with --ignore-scripts).
RUN cd ui && node ../node_modules/typescript/bin/tsc -p tsconfig.json --noEmit && node ../node_modules/vite/bin/vite.js build

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production GATEWAY_PORT=8080 GATEWAY_HOST=0.0.0.0 GATEWAY_DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY gateway ./gateway
COPY operator ./operator
COPY --from=ui /app/ui/dist ./ui/dist
RUN mkdir -p /data && chown -R node:node /data
USER node
EXPOSE 8080
STOPSIGNAL SIGTERM
CMD ["gateway/bin/gateway"]
