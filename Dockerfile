# Multi-stage image: dependencies installed once, runtime as a non-root user on Node 24.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY gateway/package.json gateway/package.json
COPY operator/package.json operator/package.json
# The `node` devDependency is not needed in the image (the base image is Node 24).
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production GATEWAY_PORT=8080 GATEWAY_HOST=0.0.0.0 GATEWAY_DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY gateway ./gateway
COPY operator ./operator
RUN mkdir -p /data && chown -R node:node /data
USER node
EXPOSE 8080
STOPSIGNAL SIGTERM
CMD ["gateway/bin/gateway"]
