//go:build tools

// Pins the Consul agent's main package so `go mod tidy` keeps its dependencies.
package tools

import _ "github.com/hashicorp/consul"
