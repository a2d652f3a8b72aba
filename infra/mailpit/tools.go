//go:build tools

// Pins Mailpit's main package so `go mod tidy` keeps its dependencies.
package tools

import _ "github.com/axllent/mailpit"
