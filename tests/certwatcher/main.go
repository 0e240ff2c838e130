// Command certwatcher puts keepwatch's tlscert and controller-runtime's
// certwatcher through the same kubelet rotations of a kubernetes.io/tls
// Secret while clients make TLS handshakes in a loop, and prints what each
// served: failed handshakes, handshakes that got a pair older than the one
// in force, the time from the swap to the new pair served, and the CPU
// each uses while nothing changes. It is a module of its own so that
// controller-runtime never enters the library's graph. Run it with
// make bench-tls, under the machine's heavy lock; the figures go in
// docs/benchmarks.md.
//
// Two scenarios, each with the same certificates for both watchers:
//
//   - atomic: each rotation is one kubelet update that changes tls.crt and
//     tls.key together;
//   - key-first: each rotation is written file by file in the wrong order,
//     two kubelet updates: the new key beside the old certificate (a pair
//     that does not match), then the new certificate.
//
// The pair in force is the newest whole pair on disk: pair i from the swap
// of ..data that made it whole. A handshake got a pair older than the one
// in force if its certificate was chosen (in GetCertificate, timed on the
// server) after that swap and is older. The time to serve is from the swap
// to the first handshake served pair i.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/keepwatch/file/kubevol"
	"github.com/keepwatch/file/tlscert"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
)

var (
	rotations = flag.Int("rotations", 100, "rotations per scenario")
	interval  = flag.Duration("interval", 100*time.Millisecond, "time between rotations")
	gap       = flag.Duration("gap", 25*time.Millisecond, "key-first: time between the key's update and the certificate's")
	clients   = flag.Int("clients", 2, "clients handshaking in a loop")
	idle      = flag.Duration("idle", 60*time.Second, "how long each watcher's idle CPU is measured")
	root      = flag.String("root", ".", "where the volumes are made: a directory whose ancestors are quiet, since keepwatch watches them (a shared /tmp is not)")
	idleChild = flag.String("idle-child", "", "internal: run this watcher idle on -dir and report its CPU")
	childDir  = flag.String("dir", "", "internal: the idle child's volume")
)

func main() {
	flag.Parse()
	crlog.SetLogger(logr.Discard()) // certwatcher's logs, off as in a service that sets none
	if *idleChild != "" {
		idleCPU(*idleChild, *childDir, *idle)
		return
	}
	tmp, err := os.MkdirTemp(*root, ".bench-tls-")
	check(err)
	defer os.RemoveAll(tmp)

	ca, err := newAuthority()
	check(err)
	pairs := make([]pair, *rotations+1)
	for i := range pairs {
		pairs[i], err = ca.issue(i)
		check(err)
	}

	fmt.Printf("%s, %s/%s, %d CPUs, controller-runtime %s; %d rotations %s apart, %d clients\n\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), moduleVersion("sigs.k8s.io/controller-runtime"),
		*rotations, *interval, *clients)
	fmt.Println("| scenario | watcher | handshakes | failed | older than the pair in force | older than one served before | swap to served p50 | p99 | max |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, scenario := range []string{"atomic", "key-first"} {
		for _, w := range []string{"keepwatch", "certwatcher"} {
			r := run(filepath.Join(tmp, scenario+"-"+w), w, scenario, pairs, ca.pool)
			fmt.Printf("| %s | %s | %d | %d | %d | %d | %s | %s | %s |\n", scenario, w, r.handshakes, r.failed, r.olderThanInForce,
				r.olderThanServed, ms(r.latency(0.5)), ms(r.latency(0.99)), ms(r.latency(1)))
		}
	}

	fmt.Printf("\nIdle, %s each, nothing changing:\n\n| watcher | CPU per minute idle |\n| --- | ---: |\n", *idle)
	for _, w := range []string{"keepwatch", "certwatcher"} {
		dir := filepath.Join(tmp, "idle-"+w)
		_, err := kubevol.New(dir, pairs[0].payload())
		check(err)
		out, err := exec.Command(os.Args[0], "-idle-child", w, "-dir", dir, "-idle", idle.String()).Output()
		check(err)
		fmt.Printf("| %s | %s |\n", w, strings.TrimSpace(string(out)))
	}
}

// watcher is what both watchers offer a server.
type watcher interface {
	GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error)
}

// start starts the named watcher on dir; stop stops it and waits.
func start(name, dir string) (w watcher, stop func()) {
	switch name {
	case "keepwatch":
		c, err := tlscert.New(dir, tlscert.WithLogger(discard))
		check(err)
		return c, func() { check(c.Close()) }
	case "certwatcher":
		c, err := certwatcher.New(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
		check(err)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { _ = c.Start(ctx) })
		return c, func() { cancel(); wg.Wait() }
	}
	log.Fatalf("no watcher %q", name)
	return nil, nil
}

// served is one certificate chosen for a handshake, on the server.
type served struct {
	at     time.Time
	serial int
}

type result struct {
	handshakes, failed                int
	olderThanInForce, olderThanServed int
	latencies                         []time.Duration
}

func (r result) latency(q float64) time.Duration {
	if len(r.latencies) == 0 {
		return -1
	}
	s := slices.Sorted(slices.Values(r.latencies))
	i := int(q*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

// run puts one watcher through one scenario's rotations, with clients
// handshaking all along.
func run(dir, name, scenario string, pairs []pair, roots *x509.CertPool) result {
	vol, err := kubevol.New(dir, pairs[0].payload())
	check(err)
	w, stop := start(name, dir)
	defer stop()

	// The server records which pair each handshake got, and when.
	var mu sync.Mutex
	var log []served
	cfg := &tls.Config{GetCertificate: func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
		c, err := w.GetCertificate(h)
		if err == nil && c != nil {
			n := serialOf(c)
			mu.Lock()
			log = append(log, served{at: time.Now(), serial: n})
			mu.Unlock()
		}
		return c, err
	}}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	check(err)
	var serving sync.WaitGroup
	serving.Go(func() { serve(ln) })
	defer func() { ln.Close(); serving.Wait() }()

	var failed, handshakes atomic.Int64
	stopClients := make(chan struct{})
	var cl sync.WaitGroup
	for range *clients {
		cl.Go(func() {
			for {
				select {
				case <-stopClients:
					return
				default:
				}
				if err := handshake(ln.Addr().String(), roots); err != nil {
					failed.Add(1)
				}
				handshakes.Add(1)
			}
		})
	}

	// The swaps that put each pair in force.
	var swapAt time.Time
	vol.BeforeSwap = func() { swapAt = time.Now() }
	inForce := make([]time.Time, len(pairs))
	time.Sleep(*interval)
	for i := 1; i < len(pairs); i++ {
		if scenario == "key-first" {
			half := pairs[i-1].payload()
			half["tls.key"] = pairs[i].key
			_, err := vol.Update(half)
			check(err)
			time.Sleep(*gap)
		}
		_, err := vol.Update(pairs[i].payload())
		check(err)
		inForce[i] = swapAt
		time.Sleep(*interval)
	}
	close(stopClients)
	cl.Wait()

	r := result{handshakes: int(handshakes.Load()), failed: int(failed.Load())}
	mu.Lock()
	defer mu.Unlock()
	newest := 0 // the newest pair served so far
	firstServed := make([]time.Time, len(pairs))
	for _, s := range log {
		current := 0 // the pair in force when s was chosen
		for i := len(inForce) - 1; i > 0; i-- {
			if !inForce[i].IsZero() && !s.at.Before(inForce[i]) {
				current = i
				break
			}
		}
		if s.serial < current {
			r.olderThanInForce++
		}
		if s.serial < newest {
			r.olderThanServed++
		}
		newest = max(newest, s.serial)
		for i := s.serial; i > 0 && firstServed[i].IsZero(); i-- {
			firstServed[i] = s.at
		}
	}
	for i := 1; i < len(pairs); i++ {
		if !firstServed[i].IsZero() {
			r.latencies = append(r.latencies, firstServed[i].Sub(inForce[i]))
		}
	}
	return r
}

func serve(ln net.Listener) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		wg.Go(func() {
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			_ = c.(*tls.Conn).Handshake()
		})
	}
}

func handshake(addr string, roots *x509.CertPool) error {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr,
		&tls.Config{RootCAs: roots, ServerName: "localhost"})
	if err != nil {
		return err
	}
	return c.Close()
}

// serialOf is the rotation a certificate is of: its serial number.
func serialOf(c *tls.Certificate) int {
	leaf := c.Leaf
	if leaf == nil {
		var err error
		if leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return -1
		}
	}
	return int(leaf.SerialNumber.Int64()) - serialBase
}

// idleCPU runs one watcher on dir for d with nothing changing, and prints
// the CPU the process used meanwhile, per minute, after a second to settle.
func idleCPU(name, dir string, d time.Duration) {
	_, stop := start(name, dir)
	time.Sleep(time.Second)
	before := cpu()
	time.Sleep(d)
	used := cpu() - before
	stop()
	fmt.Printf("%.1f ms\n", float64(used)/float64(time.Millisecond)*float64(time.Minute)/float64(d))
}

func cpu() time.Duration {
	var ru syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) string {
	if d < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == path {
				return m.Version
			}
		}
	}
	return "?"
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
