//go:build tools

// Pins helm's main package so `go mod tidy` keeps its dependencies.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
