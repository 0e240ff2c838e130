// Command fleet checks keepwatch's fleet alerts end to end, as a cluster
// would run them: three replica processes of one Deployment, each with its
// own kubelet-style volumes (kubevol), a real Prometheus (Debian's
// prometheus package) scraping them on loopback with keepwatch's rules,
// and its HTTP API asked whether the alerts fire.
//
//	make fleet        (from the repository's root; about a minute)
//
// It runs the rules of keepwatchprom/keepwatch.rules.yml with shorter
// durations, so that a check takes seconds, not the quarter of an hour a
// cluster waits: every "for:" of N minutes becomes N seconds, and every
// range of N minutes N*2 seconds (the variant is written beside
// Prometheus's config and printed). The rules themselves are unit-tested
// at their real durations by promtool (keepwatchprom's TestAlertRules).
//
// The steps: the three replicas start on one config and agree; the third
// is given another config (as when one node's kubelet has the new
// ConfigMap and the others not yet), and KeepwatchConfigInconsistent
// fires; it converges, and the alert clears. Then the first is pushed a
// config its Validate rejects: its identity stays that of the config in
// force, so the replicas still agree, and KeepwatchConfigReloadFailed
// fires until a good config follows. Last, the second is given a TLS
// Secret whose key is not its certificate's: tlscert refuses it and serves
// on the certificate in force, and KeepwatchTLSRotationRejected fires
// until a good pair follows.
//
// Every process it starts is stopped before it exits, on an interrupt
// too. It exits 1 if a step does not happen within its deadline.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/keepwatch/file/kubevol"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "replica" {
		if err := replica(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "replica:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	f := &fleet{began: time.Now()}
	err := f.run(ctx)
	f.stopAll()
	stop()
	if err != nil {
		fmt.Println("FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("PASS: the fleet check")
}

// fleet is the check's state: the processes it started, to stop them all.
type fleet struct {
	began time.Time
	dir   string
	procs []*proc
	prom  string // Prometheus's base URL
}

type proc struct {
	name string
	cmd  *exec.Cmd
	addr string // a replica's listen address
	log  string // its stderr's file
}

func (f *fleet) say(format string, args ...any) {
	fmt.Printf("[%5.1fs] %s\n", time.Since(f.began).Seconds(), fmt.Sprintf(format, args...))
}

// The configs of the Deployment's ConfigMaps.
var (
	appV1   = map[string]string{"app.yaml": "greeting: hello\nreplicas: 3\n"}
	appV2   = map[string]string{"app.yaml": "greeting: hello, world\nreplicas: 3\n"}
	appBad  = map[string]string{"app.yaml": "greeting: hello\nreplicas: 0\n"}
	authzV1 = map[string]string{"policy.yaml": "allow: [read]\n", "roles.yaml": "roles: {alice: [read, write]}\n"}
)

func (f *fleet) run(ctx context.Context) error {
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		return errors.New("prometheus not found: apt-get install prometheus (Debian's package)")
	}
	out, _ := exec.Command(promBin, "--version").CombinedOutput()
	f.say("%s", strings.SplitN(string(out), "\n", 2)[0])
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if f.dir, err = os.MkdirTemp("", "keepwatch-fleet"); err != nil {
		return err
	}

	// Three pods: each its own volumes of the same ConfigMaps and Secrets.
	apps := make([]*kubevol.Volume, 3)
	tlsVols := make([]*kubevol.Volume, 3)
	serving, err := selfSigned("svc")
	if err != nil {
		return err
	}
	for i := range apps {
		pod := filepath.Join(f.dir, fmt.Sprintf("pod-%d", i+1))
		if apps[i], err = kubevol.New(filepath.Join(pod, "app"), appV1); err != nil {
			return err
		}
		if _, err = kubevol.New(filepath.Join(pod, "authz"), authzV1); err != nil {
			return err
		}
		secret, err := kubevol.New(filepath.Join(pod, "identity"), map[string]string{"key": "shared by the replicas, from a Secret\n"})
		if err != nil {
			return err
		}
		if tlsVols[i], err = kubevol.New(filepath.Join(pod, "tls"), serving.secret()); err != nil {
			return err
		}
		p, err := f.startReplica(ctx, self, fmt.Sprintf("pod-%d", i+1), pod, filepath.Join(secret.Dir, "key"))
		if err != nil {
			return err
		}
		f.say("%s listening on %s", p.name, p.addr)
	}
	if err := f.startPrometheus(ctx, promBin); err != nil {
		return err
	}

	// All three scraped, agreeing.
	if err := f.until(ctx, "every replica scraped, each on one identity of app", 60*time.Second, func() (bool, error) {
		ids, err := f.identities()
		return len(ids) == 3 && len(distinct(ids)) == 1, err
	}); err != nil {
		return err
	}
	if err := f.showIdentities(); err != nil {
		return err
	}
	if err := f.showScrape(f.procs[0]); err != nil {
		return err
	}

	// pod-3 gets another config.
	f.say("pod-3's app ConfigMap volume updated to another config (greeting: hello, world)")
	if _, err := apps[2].Update(appV2); err != nil {
		return err
	}
	if err := f.until(ctx, "pod-3's identity changes", 30*time.Second, func() (bool, error) {
		ids, err := f.identities()
		return len(distinct(ids)) == 2, err
	}); err != nil {
		return err
	}
	if err := f.showIdentities(); err != nil {
		return err
	}
	changed := time.Now()
	if err := f.alert(ctx, "KeepwatchConfigInconsistent", "firing", 90*time.Second); err != nil {
		return err
	}
	f.say("  %.1fs after the change (for: 15s in the fleet's rules)", time.Since(changed).Seconds())

	// It converges.
	f.say("pod-3's volume updated back to the others' config")
	if _, err := apps[2].Update(appV1); err != nil {
		return err
	}
	converged := time.Now()
	if err := f.alert(ctx, "KeepwatchConfigInconsistent", "", 60*time.Second); err != nil {
		return err
	}
	f.say("  %.1fs after the replica converged", time.Since(converged).Seconds())
	if err := f.showIdentities(); err != nil {
		return err
	}

	// A push pod-1 rejects: it keeps the config in force, and its identity.
	f.say("pod-1's volume updated to a config its Validate rejects (replicas: 0)")
	if _, err := apps[0].Update(appBad); err != nil {
		return err
	}
	if err := f.alert(ctx, "KeepwatchConfigReloadFailed", "firing", 90*time.Second); err != nil {
		return err
	}
	ids, err := f.identities()
	if err != nil {
		return err
	}
	if len(distinct(ids)) != 1 {
		return fmt.Errorf("a rejected push changed an identity: %v", ids)
	}
	f.say("  the replicas still agree: pod-1's identity is the config in force's, not the rejected file's")
	if err := f.checkNotFiring("KeepwatchConfigInconsistent"); err != nil {
		return err
	}
	f.say("pod-1's volume updated to the good config")
	if _, err := apps[0].Update(appV1); err != nil {
		return err
	}
	if err := f.alert(ctx, "KeepwatchConfigReloadFailed", "", 60*time.Second); err != nil {
		return err
	}

	// A TLS Secret pod-2 refuses: a certificate with another's key. It
	// serves on the certificate in force.
	renewed, err := selfSigned("svc")
	if err != nil {
		return err
	}
	f.say("pod-2's TLS Secret volume updated to a certificate with another certificate's key")
	if _, err := tlsVols[1].Update(map[string]string{"tls.crt": renewed.cert, "tls.key": serving.key}); err != nil {
		return err
	}
	refused := time.Now()
	if err := f.alert(ctx, "KeepwatchTLSRotationRejected", "firing", 90*time.Second); err != nil {
		return err
	}
	f.say("  %.1fs after the refused pair (for: 5s in the fleet's rules)", time.Since(refused).Seconds())
	if err := f.showSeries(`keepwatch_tls_last_rotation_successful{job="svc"}`); err != nil {
		return err
	}
	f.say("pod-2's TLS Secret volume updated to the renewed certificate and its key")
	if _, err := tlsVols[1].Update(renewed.secret()); err != nil {
		return err
	}
	return f.alert(ctx, "KeepwatchTLSRotationRejected", "", 60*time.Second)
}

// showSeries prints a query's samples, by pod.
func (f *fleet) showSeries(q string) error {
	samples, err := f.query(q)
	if err != nil {
		return err
	}
	var lines []string
	for _, s := range samples {
		lines = append(lines, fmt.Sprintf("pod=%s %v", f.podOf(s.labels["instance"]), s.value))
	}
	slices.Sort(lines)
	f.say("Prometheus: %s\n%s", q, indent(strings.Join(lines, "\n")))
	return nil
}

// startReplica starts one pod's process and waits for its address.
func (f *fleet) startReplica(ctx context.Context, self, name, pod, key string) (*proc, error) {
	p := &proc{name: name, log: filepath.Join(f.dir, name+".log")}
	logFile, err := os.Create(p.log)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	p.cmd = exec.Command(self, "replica", "-app", filepath.Join(pod, "app"), "-authz", filepath.Join(pod, "authz"), "-tls", filepath.Join(pod, "tls"), "-key", key)
	p.cmd.Stderr = logFile
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	f.procs = append(f.procs, p)
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				addr <- a
			}
		}
		close(addr)
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			return nil, fmt.Errorf("%s exited: %s", name, tail(p.log))
		}
		p.addr = a
		return p, nil
	case <-time.After(30 * time.Second):
		return nil, fmt.Errorf("%s did not start: %s", name, tail(p.log))
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// fleetRules is the rules file with its durations in seconds.
func fleetRules() ([]byte, error) {
	b, err := os.ReadFile(filepath.Join("..", "..", "keepwatchprom", "keepwatch.rules.yml"))
	if err != nil {
		return nil, err
	}
	b = regexp.MustCompile(`for: (\d+)m`).ReplaceAll(b, []byte("for: ${1}s"))
	b = regexp.MustCompile(`\[(\d+)m\]`).ReplaceAllFunc(b, func(m []byte) []byte {
		n, _ := strconv.Atoi(string(m[1 : len(m)-2]))
		return []byte(fmt.Sprintf("[%ds]", 2*n))
	})
	return b, nil
}

func (f *fleet) startPrometheus(ctx context.Context, bin string) error {
	rules, err := fleetRules()
	if err != nil {
		return err
	}
	rulesPath := filepath.Join(f.dir, "keepwatch.fleet.rules.yml")
	if err := os.WriteFile(rulesPath, rules, 0o644); err != nil {
		return err
	}
	var targets []string
	for _, p := range f.procs {
		targets = append(targets, strconv.Quote(p.addr))
	}
	conf := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: svc
    static_configs:
      - targets: [%s]
`, rulesPath, strings.Join(targets, ", "))
	confPath := filepath.Join(f.dir, "prometheus.yml")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return err
	}
	f.say("prometheus.yml:\n%s", indent(conf))
	var durations []string
	for _, m := range regexp.MustCompile(`(?m)^\s+(- alert: \S+|expr: .*|for: \S+)$`).FindAllString(string(rules), -1) {
		durations = append(durations, strings.TrimSpace(m))
	}
	f.say("the fleet's rules (keepwatch.rules.yml, minutes as seconds):\n%s", indent(strings.Join(durations, "\n")))

	port, err := freePort()
	if err != nil {
		return err
	}
	f.prom = "http://" + port
	p := &proc{name: "prometheus", log: filepath.Join(f.dir, "prometheus.log")}
	logFile, err := os.Create(p.log)
	if err != nil {
		return err
	}
	defer logFile.Close()
	p.cmd = exec.Command(bin, "--config.file="+confPath, "--storage.tsdb.path="+filepath.Join(f.dir, "data"),
		"--web.listen-address="+port, "--log.level=warn")
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		return err
	}
	f.procs = append(f.procs, p)
	return f.until(ctx, "prometheus ready on "+port, 60*time.Second, func() (bool, error) {
		resp, err := http.Get(f.prom + "/-/ready")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// until polls ok every 250 ms until it holds, and says so, or fails after
// timeout.
func (f *fleet) until(ctx context.Context, what string, timeout time.Duration, ok func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		done, err := ok()
		if done && err == nil {
			f.say("%s", what)
			return nil
		}
		last = err
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %s (last error: %v)", what, timeout, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// query runs an instant PromQL query and returns each sample's labels and
// value.
func (f *fleet) query(q string) ([]sample, error) {
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := f.get("/api/v1/query?query="+url.QueryEscape(q), &r); err != nil {
		return nil, err
	}
	var out []sample
	for _, s := range r.Data.Result {
		v, _ := strconv.ParseFloat(fmt.Sprint(s.Value[1]), 64)
		out = append(out, sample{labels: s.Metric, value: v})
	}
	return out, nil
}

type sample struct {
	labels map[string]string
	value  float64
}

func (f *fleet) get(path string, into any) error {
	resp, err := http.Get(f.prom + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, b)
	}
	return json.NewDecoder(resp.Body).Decode(into)
}

// identities returns each replica's identity of the app config, by
// instance.
func (f *fleet) identities() (map[string]string, error) {
	samples, err := f.query(`keepwatch_config_info{job="svc",config="app"}`)
	if err != nil {
		return nil, err
	}
	ids := map[string]string{}
	for _, s := range samples {
		ids[f.podOf(s.labels["instance"])] = s.labels["identity"]
	}
	return ids, nil
}

func (f *fleet) podOf(instance string) string {
	for _, p := range f.procs {
		if p.addr == instance {
			return p.name
		}
	}
	return instance
}

func distinct(ids map[string]string) []string {
	var out []string
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func (f *fleet) showIdentities() error {
	ids, err := f.identities()
	if err != nil {
		return err
	}
	pods := make([]string, 0, len(ids))
	for pod := range ids {
		pods = append(pods, pod)
	}
	slices.Sort(pods)
	var lines []string
	for _, pod := range pods {
		lines = append(lines, fmt.Sprintf("keepwatch_config_info{config=\"app\", pod=%s} identity=%s", pod, ids[pod]))
	}
	f.say("Prometheus: keepwatch_config_info{job=\"svc\",config=\"app\"}\n%s", indent(strings.Join(lines, "\n")))
	return nil
}

// showScrape prints the keepwatch series of one replica's /metrics: a
// service with two live configs.
func (f *fleet) showScrape(p *proc) error {
	resp, err := http.Get("http://" + p.addr + "/metrics")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "keepwatch_") {
			lines = append(lines, strings.ReplaceAll(sc.Text(), f.dir, "$FLEET"))
		}
	}
	f.say("%s's /metrics (keepwatch_ series; $FLEET is the check's directory):\n%s", p.name, indent(strings.Join(lines, "\n")))
	return sc.Err()
}

type alertsReply struct {
	Data struct {
		Alerts []struct {
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
			State       string            `json:"state"`
			ActiveAt    time.Time         `json:"activeAt"`
		} `json:"alerts"`
	} `json:"data"`
}

// alert waits until the alert name is in state (pending, firing; "" for
// gone) in Prometheus's /api/v1/alerts, printing each state it passes.
func (f *fleet) alert(ctx context.Context, name, state string, timeout time.Duration) error {
	seen := ""
	what := name + " " + state
	if state == "" {
		what = name + " cleared"
	}
	return f.until(ctx, what, timeout, func() (bool, error) {
		var r alertsReply
		if err := f.get("/api/v1/alerts", &r); err != nil {
			return false, err
		}
		now := ""
		for _, a := range r.Data.Alerts {
			if a.Labels["alertname"] == name {
				now = a.State
				if now != seen {
					f.say("  /api/v1/alerts: %s %s %v: %s", name, a.State, labelsOf(a.Labels), a.Annotations["description"])
				}
			}
		}
		seen = now
		return now == state, nil
	})
}

func (f *fleet) checkNotFiring(name string) error {
	var r alertsReply
	if err := f.get("/api/v1/alerts", &r); err != nil {
		return err
	}
	for _, a := range r.Data.Alerts {
		if a.Labels["alertname"] == name {
			return fmt.Errorf("%s is %s", name, a.State)
		}
	}
	f.say("  %s: not pending, not firing", name)
	return nil
}

func labelsOf(m map[string]string) string {
	var parts []string
	for k, v := range m {
		if k != "alertname" && k != "severity" {
			parts = append(parts, k+"="+v)
		}
	}
	slices.Sort(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

// stopAll stops every process the check started, Prometheus first, with
// SIGTERM to its process group, then SIGKILL after 10 s; and removes the
// check's directory.
func (f *fleet) stopAll() {
	for _, p := range slices.Backward(f.procs) {
		if p.cmd.Process == nil {
			continue
		}
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- p.cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		f.say("stopped %s (pid %d)", p.name, p.cmd.Process.Pid)
	}
	if f.dir != "" {
		_ = os.RemoveAll(f.dir)
	}
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// tail returns the end of a log, for an error.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
