package model

import (
	"context"
	"sync"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// faultClient wraps a real client to inject errors, hide capabilities and
// count or hold calls; everything else goes to the engine.
type faultClient struct {
	broker.Client
	mu          sync.Mutex
	errs        map[string]error
	caps        *broker.Capabilities
	noEvents    bool
	calls       map[string]int
	inFlight    int
	maxInFlight int
	hold        chan struct{} // when not nil, Entities waits for it
	settleHold  chan struct{} // when not nil, Settle waits for it
}

func newFault(c broker.Client) *faultClient {
	return &faultClient{Client: c, errs: map[string]error{}, calls: map[string]int{}}
}

func (f *faultClient) fail(method string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs[method] = err
}

func (f *faultClient) enter(method string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[method]++
	return f.errs[method]
}

func (f *faultClient) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

func (f *faultClient) Capabilities() broker.Capabilities {
	if f.caps != nil {
		return *f.caps
	}
	return f.Client.Capabilities()
}

func (f *faultClient) Events() (<-chan broker.Event, func()) {
	if f.noEvents {
		return nil, func() {}
	}
	return f.Client.Events()
}

func (f *faultClient) Entities(ctx context.Context) ([]broker.Entity, error) {
	f.mu.Lock()
	f.inFlight++
	f.maxInFlight = max(f.maxInFlight, f.inFlight)
	hold := f.hold
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
	}()
	if hold != nil {
		<-hold
	}
	if err := f.enter("Entities"); err != nil {
		return nil, err
	}
	return f.Client.Entities(ctx)
}

func (f *faultClient) Browse(ctx context.Context, req broker.BrowseRequest) ([]*broker.Message, error) {
	if err := f.enter("Browse"); err != nil {
		return nil, err
	}
	return f.Client.Browse(ctx, req)
}

func (f *faultClient) Receive(ctx context.Context, req broker.ReceiveRequest) ([]*broker.Message, error) {
	if err := f.enter("Receive"); err != nil {
		return nil, err
	}
	return f.Client.Receive(ctx, req)
}

func (f *faultClient) Settle(ctx context.Context, s broker.Settlement) error {
	if err := f.enter("Settle"); err != nil {
		return err
	}
	f.mu.Lock()
	hold := f.settleHold
	f.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return f.Client.Settle(ctx, s)
}

func (f *faultClient) RenewLock(ctx context.Context, entity string, token broker.LockToken) (time.Time, error) {
	if err := f.enter("RenewLock"); err != nil {
		return time.Time{}, err
	}
	return f.Client.RenewLock(ctx, entity, token)
}

func (f *faultClient) Send(ctx context.Context, entity string, msgs []*broker.Message) error {
	if err := f.enter("Send"); err != nil {
		return err
	}
	return f.Client.Send(ctx, entity, msgs)
}

func (f *faultClient) Purge(ctx context.Context, entity string, sub broker.SubQueue) (int64, error) {
	if err := f.enter("Purge"); err != nil {
		return 0, err
	}
	return f.Client.Purge(ctx, entity, sub)
}
