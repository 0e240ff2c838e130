// Package prom tests keepwatchprom's collector with live configs: the
// series of a service's live configs through start, a rejected push and a
// good one. It is a module of its own, beside keepwatchprom's, so that
// keepwatchprom's go.mod requires neither package live nor koanf, even for
// its tests: a koanf v1 project whose go.mod predates module graph pruning
// loads its dependencies' test imports too.
package prom
