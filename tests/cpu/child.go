package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// A child is one of this program's processes, started again in a part of
// its own. It speaks in lines on its standard output: "ready" when it is
// set, then one JSON result. Closing its standard input tells it to stop.
type child struct {
	role  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startChild starts exe in role with args; extra, if not nil, adjusts the
// command before it starts (credentials, say).
func startChild(exe, role string, args []string, extra func(*exec.Cmd)) (*child, error) {
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), childEnv+"="+role)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if extra != nil {
		extra(cmd)
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &child{role: role, cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}, nil
}

// waitReady waits for the child's "ready" line.
func (c *child) waitReady() error {
	line, err := c.out.ReadString('\n')
	if err != nil {
		c.stdin.Close()
		return fmt.Errorf("child %s ended before it was ready: %w", c.role, c.cmd.Wait())
	}
	if strings.TrimSpace(line) != "ready" {
		c.kill()
		return fmt.Errorf("child %s: %q instead of ready", c.role, line)
	}
	return nil
}

// stop tells the child to stop and reads its result into v.
func (c *child) stop(v any) error {
	c.stdin.Close()
	return c.result(v)
}

// result waits for the child to end and reads its result into v.
func (c *child) result(v any) error {
	decodeErr := json.NewDecoder(c.out).Decode(v)
	if err := c.cmd.Wait(); err != nil {
		return fmt.Errorf("child %s: %w", c.role, err)
	}
	return decodeErr
}

func (c *child) kill() {
	c.stdin.Close()
	c.cmd.Process.Kill()
	c.cmd.Wait()
}

// stdinClosed is closed when standard input ends: the parent's word to
// stop, which also comes when the parent dies.
func stdinClosed() <-chan struct{} {
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(done)
	}()
	return done
}

// sayReady tells the parent the child is set.
func sayReady() error {
	_, err := fmt.Println("ready")
	return err
}

// say gives the parent the child's result.
func say(v any) error {
	return json.NewEncoder(os.Stdout).Encode(v)
}
