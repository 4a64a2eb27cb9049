//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// healthCheck returns the runner's HealthCheck for --health-cmd and
// --health-url, or nil when neither is set. With both, both must pass.
// The runner bounds each call by --health-timeout through ctx.
func healthCheck(command, target string, env []string) func(context.Context) error {
	var checks []func(context.Context) error
	if command != "" {
		checks = append(checks, func(ctx context.Context) error { return checkCommand(ctx, command, env) })
	}
	if target != "" {
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		checks = append(checks, func(ctx context.Context) error { return checkURL(ctx, client, target) })
	}
	if len(checks) == 0 {
		return nil
	}
	return func(ctx context.Context) error {
		for _, check := range checks {
			if err := check(ctx); err != nil {
				return err
			}
		}
		return nil
	}
}

// checkCommand runs command with sh -c; exit status 0 is healthy. The shell
// runs in a process group of its own, killed whole when ctx ends.
func checkCommand(ctx context.Context, command string, env []string) error {
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := startOwn(cmd)
	if err == nil {
		err = cmd.Wait()
		disown(cmd.Process.Pid)
	}
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("--health-cmd: no answer in time: %w", ctx.Err())
	}
	if last := lastLine(out.String()); last != "" {
		return fmt.Errorf("--health-cmd: %v: %s", err, last)
	}
	return fmt.Errorf("--health-cmd: %v", err)
}

// checkURL sends GET url; a 2xx answer is healthy. Redirects are not
// followed: a 3xx is unhealthy.
func checkURL(ctx context.Context, client *http.Client, target string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fmt.Errorf("--health-url: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return fmt.Errorf("--health-url: GET %s: %w", target, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if last := lastLine(string(body)); last != "" {
			return fmt.Errorf("--health-url: GET %s: %s: %s", target, resp.Status, last)
		}
		return fmt.Errorf("--health-url: GET %s: %s", target, resp.Status)
	}
	return nil
}

// lastLine returns the last non-empty line of s, shortened to 200 bytes.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[i+1:])
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
