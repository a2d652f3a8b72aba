//go:build tools

// Pins Toxiproxy's server main package so `go mod tidy` keeps its dependencies.
package tools

import _ "github.com/Shopify/toxiproxy/v2/cmd/server"
