# Every target runs with the project's Node 24 (devDependency `node`), not the system Node.
SHELL := /bin/bash
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)

.PHONY: install run test test-k8s lint bench build clean cluster-bins

node_modules/.installed: package.json package-lock.json gateway/package.json operator/package.json
	npm ci --no-audit --no-fund
	@touch $@

install: node_modules/.installed

# --max-semi-space-size=8: a capped young generation keeps RSS ~80 MB lower under load at no CPU cost (docs/benchmarks.md).
run: install
	node --max-semi-space-size=8 gateway/src/main.ts

test: install
	vitest run

lint: install
	tsc -p tsconfig.json --noEmit
	biome check .

bench: install
	node test/bench/run.ts

build: install
	tsc -p tsconfig.build.json

clean:
	rm -rf node_modules dist gateway/dist operator/dist

# etcd + kube-apiserver for the Kubernetes tests, built from Go modules into test/cluster/bin/
# (cached: a no-op once built; the first build takes many minutes). Needs Go >= 1.24.
cluster-bins:
	test/cluster/build.sh
