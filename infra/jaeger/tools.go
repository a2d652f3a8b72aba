//go:build tools

// Pins Jaeger's main package so `go mod tidy` keeps its dependencies.
package tools

import _ "github.com/jaegertracing/jaeger/cmd/jaeger"
