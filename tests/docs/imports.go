//go:build docimports

package main

// The packages the docs' Go blocks may import besides the standard
// library: this file is never built, but go mod tidy keeps their modules
// in this module's go.mod, where the blocks are compiled. For a doc to
// import a package of another module, add it here and run make tidy
// (go mod tidy, through tests/tidy.sh).
import (
	_ "github.com/keepwatch/file"
	_ "github.com/keepwatch/file/k8smount"
	_ "github.com/keepwatch/file/keepwatchprom"
	_ "github.com/keepwatch/file/kubevol"
	_ "github.com/keepwatch/file/live"
	_ "github.com/keepwatch/file/tlscert"
	_ "github.com/knadh/koanf/parsers/json"
	_ "github.com/knadh/koanf/parsers/yaml"
	_ "github.com/knadh/koanf/providers/confmap"
	_ "github.com/knadh/koanf/providers/env/v2"
	_ "github.com/knadh/koanf/providers/file"
	_ "github.com/knadh/koanf/v2"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/stretchr/testify/require"
	_ "go.opentelemetry.io/contrib/bridges/prometheus"
	_ "go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	_ "go.opentelemetry.io/otel/sdk/metric"
	_ "go.uber.org/goleak"
)
