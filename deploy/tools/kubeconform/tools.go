//go:build tools

// Pins kubeconform's main package so `go mod tidy` keeps its dependencies.
package tools

import _ "github.com/yannh/kubeconform/cmd/kubeconform"
