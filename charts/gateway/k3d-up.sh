#!/usr/bin/env bash
# A local cluster running the whole stack: k3d cluster, the image built with docker and imported (no registry),
# a throwaway Postgres and Redis (unless DATABASE_URL / REDIS_URL name your own), their Secrets, and the chart.
#
# Usage: charts/gateway/k3d-up.sh      (or: make k3d-up)
# Needs: docker, k3d, kubectl, helm.  Settings (environment):
#   CLUSTER=model-gateway  NAMESPACE=model-gateway  RELEASE=gateway  IMAGE=model-gateway:dev
#   DATABASE_URL / REDIS_URL   use these instead of deploying Postgres / Redis in the cluster
#   HELM_ARGS                  extra arguments for `helm upgrade --install` (e.g. "--set gateway.logLevel=debug")
# Tear down: k3d cluster delete "$CLUSTER"
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CLUSTER="${CLUSTER:-model-gateway}"
NAMESPACE="${NAMESPACE:-model-gateway}"
RELEASE="${RELEASE:-gateway}"
IMAGE="${IMAGE:-model-gateway:dev}"

die() {
  echo "k3d-up: $*" >&2
  exit 1
}
step() { echo "==> $*"; }

for tool in docker k3d kubectl helm; do
  command -v "$tool" >/dev/null 2>&1 || die "'$tool' is not installed (needed: docker, k3d, kubectl, helm)"
done
docker info >/dev/null 2>&1 || die "docker is not running (or this user may not use it)"

if k3d cluster list "$CLUSTER" >/dev/null 2>&1; then
  step "k3d cluster $CLUSTER exists"
else
  step "creating k3d cluster $CLUSTER"
  k3d cluster create "$CLUSTER" --wait
fi
kubectl config use-context "k3d-$CLUSTER" >/dev/null

step "building $IMAGE"
docker build -t "$IMAGE" "$ROOT"
step "importing $IMAGE into $CLUSTER"
k3d image import "$IMAGE" --cluster "$CLUSTER"

kubectl create namespace "$NAMESPACE" --dry-run=client -o yaml | kubectl apply -f - >/dev/null

# Development-only Postgres and Redis: no persistence, a fixed password. Production points the Secrets at real ones.
if [[ -z "${DATABASE_URL:-}" ]]; then
  step "deploying a throwaway Postgres 15"
  kubectl -n "$NAMESPACE" apply -f - <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: postgres, labels: {app: postgres}}
spec:
  selector: {matchLabels: {app: postgres}}
  template:
    metadata: {labels: {app: postgres}}
    spec:
      containers:
        - name: postgres
          image: postgres:15-alpine
          env:
            - {name: POSTGRES_USER, value: gateway}
            - {name: POSTGRES_PASSWORD, value: gateway}
            - {name: POSTGRES_DB, value: gateway}
          ports: [{containerPort: 5432}]
          readinessProbe: {exec: {command: [pg_isready, -U, gateway]}, periodSeconds: 2}
---
apiVersion: v1
kind: Service
metadata: {name: postgres}
spec: {selector: {app: postgres}, ports: [{port: 5432}]}
YAML
  DATABASE_URL="postgres://gateway:gateway@postgres.$NAMESPACE.svc:5432/gateway"
fi
if [[ -z "${REDIS_URL:-}" ]]; then
  step "deploying a throwaway Redis 7"
  kubectl -n "$NAMESPACE" apply -f - <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: redis, labels: {app: redis}}
spec:
  selector: {matchLabels: {app: redis}}
  template:
    metadata: {labels: {app: redis}}
    spec:
      containers:
        - name: redis
          image: redis:7-alpine
          args: [--save, "", --appendonly, "no"]
          ports: [{containerPort: 6379}]
          readinessProbe: {exec: {command: [redis-cli, ping]}, periodSeconds: 2}
---
apiVersion: v1
kind: Service
metadata: {name: redis}
spec: {selector: {app: redis}, ports: [{port: 6379}]}
YAML
  REDIS_URL="redis://redis.$NAMESPACE.svc:6379"
fi

step "writing Secrets $RELEASE-postgres and $RELEASE-redis"
kubectl -n "$NAMESPACE" create secret generic "$RELEASE-postgres" --from-literal=url="$DATABASE_URL" \
  --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl -n "$NAMESPACE" create secret generic "$RELEASE-redis" --from-literal=url="$REDIS_URL" \
  --dry-run=client -o yaml | kubectl apply -f - >/dev/null

step "helm upgrade --install $RELEASE"
# shellcheck disable=SC2086 # HELM_ARGS is split on purpose
helm upgrade --install "$RELEASE" "$HERE" --namespace "$NAMESPACE" \
  --set image.repository="${IMAGE%:*}" --set image.tag="${IMAGE##*:}" --set image.pullPolicy=IfNotPresent \
  --set postgres.existingSecret="$RELEASE-postgres" --set redis.existingSecret="$RELEASE-redis" \
  ${HELM_ARGS:-}

# Same naming as the chart's "gateway.fullname" helper.
if [[ "$RELEASE" == *gateway* ]]; then FULLNAME="$RELEASE"; else FULLNAME="$RELEASE-gateway"; fi
step "waiting for the operator (it creates the encryption-key Secret the gateway pods wait for)"
kubectl -n "$NAMESPACE" rollout status "deployment/$FULLNAME-operator" --timeout=180s ||
  die "the operator is not ready: kubectl -n $NAMESPACE logs deployment/$FULLNAME-operator"
step "waiting for the gateway"
kubectl -n "$NAMESPACE" rollout status "deployment/$FULLNAME" --timeout=300s ||
  die "the gateway is not ready: kubectl -n $NAMESPACE describe pods -l app.kubernetes.io/component=gateway"

cat <<MSG

The gateway runs in k3d cluster $CLUSTER, namespace $NAMESPACE.
  kubectl -n $NAMESPACE port-forward svc/$FULLNAME 8080:80
  curl -s localhost:8080/health
The generated admin API key is printed once in the log of one gateway pod:
  kubectl -n $NAMESPACE logs -l app.kubernetes.io/instance=$RELEASE,app.kubernetes.io/component=gateway --tail=-1 | grep -A1 'Admin API key'
Rebuild and roll out after a change: run this script again, then
  kubectl -n $NAMESPACE rollout restart deployment/$FULLNAME deployment/$FULLNAME-operator
MSG
