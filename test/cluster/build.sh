#!/usr/bin/env bash
# Builds etcd and kube-apiserver from the Go module proxy into test/cluster/bin/.
#
# Versions come from go.mod/go.sum in this directory (one module graph for both).
# Each binary gets a stamp file next to it (bin/<name>.stamp) holding a hash of
# go.mod, go.sum, the Go version and the build flags; when the binary exists and
# its stamp matches, nothing is built. The first build takes many minutes (2 cores:
# see README.md); later runs take well under a second.
#
# Usage: test/cluster/build.sh          (or: make cluster-bins)
#        FORCE=1 test/cluster/build.sh  rebuild even when the stamps match
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE"
BIN="$HERE/bin"

die() {
  echo "cluster-bins: ERROR: $*" >&2
  exit 1
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }

# The official tarball's place, when it is not on PATH.
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  export PATH="$PATH:/usr/local/go/bin"
fi
command -v go >/dev/null 2>&1 || die "'go' not found on PATH (Go >= 1.24 is needed to build etcd and kube-apiserver)"

# Module-aware, use go.mod/go.sum as committed (never rewrite them), static binaries.
export GO111MODULE=on
export GOFLAGS="-mod=readonly -buildvcs=false"
export CGO_ENABLED=0

mkdir -p "$BIN"

# One build at a time (parallel test runs may all call this script).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$BIN/.lock"
  flock 9
fi

T0="$(now)"

GO_VERSION="$(go env GOVERSION)"
KUBE_VERSION="$(go list -m -f '{{.Version}}' k8s.io/kubernetes)" ||
  die "cannot resolve k8s.io/kubernetes from $HERE/go.mod (network to the Go module proxy?)"
ETCD_VERSION="$(go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)" ||
  die "cannot resolve go.etcd.io/etcd/server/v3 from $HERE/go.mod"
[[ "$KUBE_VERSION" =~ ^v([0-9]+)\.([0-9]+)\.[0-9]+$ ]] || die "unexpected k8s.io/kubernetes version '$KUBE_VERSION'"
KUBE_MAJOR="${BASH_REMATCH[1]}"
KUBE_MINOR="${BASH_REMATCH[2]}"
# Build date = the tag's date, so rebuilds are reproducible.
KUBE_DATE="$(go list -m -f '{{if .Time}}{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}{{end}}' k8s.io/kubernetes 2>/dev/null || true)"
KUBE_DATE="${KUBE_DATE:-1970-01-01T00:00:00Z}"

# What `make release` would stamp (hack/lib/version.sh), for both version packages.
KUBE_LDFLAGS="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  KUBE_LDFLAGS+=" -X ${pkg}.gitVersion=${KUBE_VERSION}"
  KUBE_LDFLAGS+=" -X ${pkg}.gitMajor=${KUBE_MAJOR} -X ${pkg}.gitMinor=${KUBE_MINOR}"
  KUBE_LDFLAGS+=" -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=${KUBE_DATE}"
  KUBE_LDFLAGS+=" -X ${pkg}.gitCommit=" # the proxy does not record the commit; default is '$Format:%H$'

done
ETCD_LDFLAGS="-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=module-${ETCD_VERSION}"

# build NAME PACKAGE LDFLAGS
build() {
  local name="$1" pkg="$2" ldflags="$3"
  local out="$BIN/$name" stamp_file="$BIN/$name.stamp"
  local stamp
  stamp="$(
    {
      echo "recipe 1"
      echo "$GO_VERSION CGO_ENABLED=$CGO_ENABLED $(go env GOOS)/$(go env GOARCH)"
      echo "$pkg"
      echo "$ldflags"
      cat go.mod go.sum
    } | sha256sum | cut -d' ' -f1
  )"

  if [[ -z "${FORCE:-}" && -x "$out" && -f "$stamp_file" && "$(cat "$stamp_file")" == "$stamp" ]]; then
    echo "cluster-bins: $name is up to date ($out)"
    return 0
  fi

  echo "cluster-bins: building $name from $pkg (first build: many minutes) ..."
  local t
  t="$(now)"
  rm -f "$stamp_file"
  if ! go build -trimpath -ldflags "$ldflags" -o "$out.tmp" "$pkg"; then
    rm -f "$out.tmp"
    die "go build of $pkg failed (see the compiler output above)"
  fi
  if ! "$out.tmp" --version >/dev/null 2>&1; then
    rm -f "$out.tmp"
    die "$name was built but '$name --version' fails"
  fi
  mv -f "$out.tmp" "$out"
  echo "$stamp" >"$stamp_file"
  echo "cluster-bins: built $name in $(elapsed "$t"): $("$out" --version | head -n1)"
}

build etcd go.etcd.io/etcd/server/v3 "$ETCD_LDFLAGS"
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$KUBE_LDFLAGS"

echo "cluster-bins: etcd ${ETCD_VERSION#v}, kube-apiserver ${KUBE_VERSION} (${GO_VERSION}) in $BIN, total $(elapsed "$T0")"
