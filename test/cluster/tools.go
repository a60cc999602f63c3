//go:build tools

// Package tools pins the two commands built by build.sh, so that `go mod tidy`
// resolves one module graph for both.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
