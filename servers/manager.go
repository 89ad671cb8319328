package servers

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrClosed is returned by Acquire once the Manager is closed.
var ErrClosed = errors.New("server manager closed")

// Manager owns the servers of one apply: at most one runs at a time, because cells are
// measured one after another and a second server would skew the first one's numbers
// (and hold its GPU memory).
type Manager struct {
	opts Options

	// acquire serializes Acquire, Release and the end of Close: a start in flight is
	// finished (or aborted) before another begins or before Close returns.
	acquire sync.Mutex

	mu     sync.Mutex // guards the fields below; never held while waiting on a process
	cur    *Process
	closed bool

	ctx    context.Context // canceled by Close, aborting a start in flight
	cancel context.CancelFunc

	closeOnce sync.Once
	closeErr  error
}

// NewManager returns a Manager that starts servers with opts.
func NewManager(opts Options) *Manager {
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{opts: opts, ctx: ctx, cancel: cancel}
}

// Acquire returns a running server for spec: the current one when it has the same Name
// and is still running, else a fresh one, after stopping the current one. A current
// server of the same Name that has died is stopped (its group reaped) and started again.
// Canceling ctx, or closing the Manager, aborts a start in flight and stops its process.
func (m *Manager) Acquire(ctx context.Context, spec Spec) (*Process, error) {
	m.acquire.Lock()
	defer m.acquire.Unlock()

	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	old := m.cur
	if old != nil && old.Name() == spec.Name {
		select {
		case <-old.Exited():
		default:
			m.mu.Unlock()
			return old, nil
		}
	}
	m.cur = nil
	m.mu.Unlock()

	if old != nil {
		if err := old.Stop(); err != nil {
			return nil, fmt.Errorf("stopping server %q before starting %q: %w", old.Name(), spec.Name, err)
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(m.ctx, cancel)
	defer stop()
	p, err := Start(ctx, spec, m.opts)
	if err != nil {
		if m.ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %w", ErrClosed, err)
		}
		return nil, err
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		// Close ran between Start's return and here; it cannot see p, so stop it now.
		p.Stop()
		return nil, ErrClosed
	}
	m.cur = p
	return p, nil
}

// Current is the running (or died, not yet replaced) server, or nil.
func (m *Manager) Current() *Process {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cur
}

// Close stops every server the Manager started, including one whose start is in flight,
// and returns when they are all gone. It is idempotent, safe to call concurrently with
// Acquire and from a signal handler's goroutine; later calls wait for the first and
// return its result. Call it deferred right after NewManager and on interrupt.
func (m *Manager) Close() error {
	m.closeOnce.Do(func() {
		m.mu.Lock()
		m.closed = true
		m.mu.Unlock()
		m.cancel()
		// Wait for a start in flight to abort; after this no Acquire can start anything.
		m.acquire.Lock()
		defer m.acquire.Unlock()
		m.mu.Lock()
		p := m.cur
		m.cur = nil
		m.mu.Unlock()
		if p != nil {
			m.closeErr = p.Stop()
		}
	})
	return m.closeErr
}
