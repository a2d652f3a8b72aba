//go:build tools

// Pins stripe-mock's main package so `go mod tidy` keeps its dependencies.
package tools

import _ "github.com/stripe/stripe-mock"
