package keepwatchprom_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"testing"

	"github.com/keepwatch/file/keepwatchprom"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// promtool returns promtool's path. CI installs Debian's prometheus
// package, which has it; elsewhere the test is skipped without it.
func promtool(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool not found: .ci/run installs it (apt-get install prometheus)")
		}
		t.Skip("promtool not found: apt-get install prometheus")
	}
	return path
}

// The rules file is valid, and its alerts fire and clear as its unit
// tests say, under Prometheus's own rule engine.
func TestAlertRules(t *testing.T) {
	tool := promtool(t)
	for _, args := range [][]string{
		{"check", "rules", "keepwatch.rules.yml"},
		{"test", "rules", "keepwatch.rules.test.yml"},
	} {
		out, err := exec.Command(tool, args...).CombinedOutput()
		t.Logf("promtool %v:\n%s", args, out)
		require.NoError(t, err, "promtool %v", args)
	}
}

// Every series the rules use is one the collector exports.
func TestTheRulesUseTheCollectorsSeries(t *testing.T) {
	var exported []string
	ch := make(chan *prometheus.Desc)
	go func() { keepwatchprom.NewCollector().Describe(ch); close(ch) }()
	name := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	for d := range ch {
		exported = append(exported, name.FindStringSubmatch(d.String())[1])
	}
	rules, err := os.ReadFile("keepwatch.rules.yml")
	require.NoError(t, err)
	used := regexp.MustCompile(`\bkeepwatch_[a-z_]+`).FindAllString(string(rules), -1)
	require.NotEmpty(t, used)
	for _, u := range used {
		assert.True(t, slices.Contains(exported, u), "%s is not exported; exported: %v", u, exported)
	}
}
