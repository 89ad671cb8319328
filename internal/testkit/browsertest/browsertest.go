// Package browsertest opens pages in headless Chromium (Debian's chromium package) for
// the tests of planrun's HTML: it records what a reader must never see, a console
// error, an exception, a failed load or a request that leaves the files.
package browsertest

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/planrun/planrun/internal/testkit/realserver"
)

// Browser is a headless Chromium with a tab; Problems are what it reported.
type Browser struct {
	Ctx      context.Context
	mu       sync.Mutex
	problems []string
}

// Start starts Chromium with a window of width × height; it is closed when the test
// ends. Without Chromium the test ends through realserver.Missing: a skip, or a failure
// under PLANRUN_INTEGRATION.
func Start(t *testing.T, width, height int) *Browser {
	t.Helper()
	if why := realserver.SystemMissing("chromium"); why != "" {
		realserver.Missing(t, why+"\nthe HTML is not rendered")
	}
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal(err) // install-system.sh found it on the same PATH
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.Flag("disable-quic", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-component-update", true), chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height))
	// A bound on a hung browser, not a speed check.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	ctx, cancelBrowser := chromedp.NewContext(ctx)
	t.Cleanup(func() { cancelBrowser(); cancelAlloc(); cancel() })
	b := &Browser{Ctx: ctx}
	err = chromedp.Listen(ctx, b.watch)
	if err == nil {
		_, err = chromedp.Call(ctx, network.Enable, network.EnableParams{})
	}
	if err == nil {
		_, err = chromedp.Call(ctx, runtime.Enable, cdp.Empty{})
	}
	if err == nil {
		_, err = chromedp.Call(ctx, log.Enable, cdp.Empty{})
	}
	if err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return b
}

func (b *Browser) watch(ev any) {
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError {
			b.problem("console " + string(ev.Type))
		}
	case *runtime.EventExceptionThrown:
		b.problem("exception: " + ev.ExceptionDetails.Text)
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError {
			b.problem("log error: " + ev.Entry.Text)
		}
	case *network.EventRequestWillBeSent:
		if !strings.HasPrefix(ev.Request.URL, "file://") {
			b.problem("request to " + ev.Request.URL)
		}
	case *network.EventLoadingFailed:
		b.problem("loading failed: " + ev.ErrorText)
	}
}

func (b *Browser) problem(s string) {
	b.mu.Lock()
	b.problems = append(b.problems, s)
	b.mu.Unlock()
}

// Problems are what Chromium reported so far.
func (b *Browser) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.problems...)
}
