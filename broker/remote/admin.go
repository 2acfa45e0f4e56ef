package remote

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/atom"
)

// Admin API constants.
const (
	adminAPIVersion = "2021-05"
	adminPageSize   = 100
	// adminMaxBody bounds one admin response.
	adminMaxBody = 16 << 20
	// adminDeniedFor is how long a refusal (401/403) or an unreachable admin
	// endpoint is remembered before the entity list is asked for again.
	adminDeniedFor = time.Minute
	// adminParallel bounds the subscription lists fetched at once.
	adminParallel = 8
)

// adminClient reads entities and counts from the ATOM admin API.
type adminClient struct {
	c    *Client
	base string // scheme://host[:port], no trailing slash

	mu           sync.Mutex
	deniedAt     time.Time
	deniedWhy    string
	deniedStatus int
	deniedCode   broker.Code
}

func newAdminClient(c *Client) *adminClient {
	base := c.cfg.AdminURL
	if base == "" {
		// As the SDKs do: https on the endpoint's port when it names one
		// (peeklock serve answers HTTPS on its AMQP port); else Azure's
		// https://HOST, or the emulator's http://HOST:5300.
		cs := c.cfg.Conn
		switch {
		case cs.PortGiven:
			base = "https://" + hostPort(cs.Host, cs.Port)
		case cs.Kind == KindEmulator:
			base = "http://" + hostPort(cs.Host, PortEmulatorAdmin)
		default:
			base = "https://" + cs.Host
		}
	}
	return &adminClient{c: c, base: strings.TrimRight(base, "/")}
}

// hostPort joins a host and a port, bracketing IPv6 hosts.
func hostPort(host string, port int) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + strconv.Itoa(port)
	}
	return host + ":" + strconv.Itoa(port)
}

// adminError is a failed admin request.
type adminError struct {
	status int
	err    *broker.Error
}

// get fetches path (no leading slash) with query and returns the body.
func (a *adminClient) get(ctx context.Context, path string, query url.Values) ([]byte, *adminError) {
	if query == nil {
		query = url.Values{}
	}
	query.Set("api-version", adminAPIVersion)
	u := a.base + "/" + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u+"?"+query.Encode(), nil)
	if err != nil {
		return nil, &adminError{err: broker.Errorf(broker.CodeInvalid, "admin request %s: %v", path, err)}
	}
	// Tokens are signed for the https form of the resource, as the SDKs do.
	resource := "https://" + strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://")
	auth, err := a.c.tokens.httpAuthorization(ctx, resource)
	if err != nil {
		return nil, &adminError{status: http.StatusUnauthorized, err: toBrokerErr(err, broker.CodeUnauthorized)}
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("Accept", "application/atom+xml")
	resp, err := a.c.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, &adminError{err: &broker.Error{Code: broker.CodeConnectionLost,
			Message: "the admin API at " + a.base + " is unreachable: " + err.Error(), Err: err}}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, adminMaxBody))
	if err != nil {
		return nil, &adminError{err: &broker.Error{Code: broker.CodeConnectionLost, Message: "reading the admin API's answer: " + err.Error(), Err: err}}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &adminError{status: resp.StatusCode, err: adminStatusErr(resp.StatusCode, body, path)}
	}
	return body, nil
}

// adminStatusErr builds the error of a non-200 admin response from its
// <Error><Detail> text.
func adminStatusErr(status int, body []byte, path string) *broker.Error {
	var e atom.Error
	_ = xml.Unmarshal(body, &e)
	text, id := splitDescription(e.Detail)
	code := broker.CodeUnknown
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		code = broker.CodeUnauthorized
	case http.StatusNotFound:
		code = broker.CodeNotFound
	case http.StatusServiceUnavailable, http.StatusTooManyRequests:
		code = broker.CodeServerBusy
	case http.StatusRequestTimeout, http.StatusGatewayTimeout:
		code = broker.CodeTimeout
	}
	if text == "" {
		text = http.StatusText(status)
	}
	return &broker.Error{Code: code, Message: fmt.Sprintf("admin API %s: %d %s", "/"+path, status, text), TrackingID: id}
}

func toBrokerErr(err error, code broker.Code) *broker.Error {
	if be, ok := err.(*broker.Error); ok {
		return be
	}
	return &broker.Error{Code: code, Message: err.Error(), Err: err}
}

// list fetches every page of a feed.
func (a *adminClient) list(ctx context.Context, path string) ([]atom.Entry, *adminError) {
	var all []atom.Entry
	for skip := 0; ; skip += adminPageSize {
		q := url.Values{"$skip": {strconv.Itoa(skip)}, "$top": {strconv.Itoa(adminPageSize)}}
		body, aerr := a.get(ctx, path, q)
		if aerr != nil {
			return nil, aerr
		}
		var f atom.Feed
		if err := xml.Unmarshal(body, &f); err != nil {
			return nil, &adminError{err: feedError(path, err)}
		}
		all = append(all, f.Entries...)
		if len(f.Entries) < adminPageSize {
			return all, nil
		}
	}
}

// entities lists queues, topics and subscriptions with settings and counts.
func (a *adminClient) entities(ctx context.Context) ([]broker.Entity, *adminError) {
	queues, aerr := a.list(ctx, "$Resources/Queues")
	if aerr != nil {
		return nil, aerr
	}
	topics, aerr := a.list(ctx, "$Resources/Topics")
	if aerr != nil {
		return nil, aerr
	}
	var out []broker.Entity
	for _, e := range queues {
		if q := queueOf(e); q != nil {
			out = append(out, queueEntity(title(e), q))
		}
	}
	subs := make([][]broker.Entity, len(topics))
	errs := make([]*adminError, len(topics))
	sem := make(chan struct{}, adminParallel)
	var wg sync.WaitGroup
	for i, t := range topics {
		if topicOf(t) == nil {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			list, aerr := a.list(ctx, url.PathEscape(title(t))+"/Subscriptions")
			if aerr != nil {
				errs[i] = aerr
				return
			}
			for _, s := range list {
				if d := subscriptionOf(s); d != nil {
					subs[i] = append(subs[i], subscriptionEntity(broker.SubscriptionPath(title(t), title(s)), d))
				}
			}
		}()
	}
	wg.Wait()
	for i, t := range topics {
		d := topicOf(t)
		if d == nil {
			continue
		}
		if errs[i] != nil {
			return nil, errs[i]
		}
		out = append(out, topicEntity(title(t), d))
		out = append(out, subs[i]...)
	}
	return out, nil
}

// feedError is the error of an answer that is not a feed, or has a value
// that is not of its element's type.
func feedError(path string, err error) *broker.Error {
	var ve *atom.ValueError
	if errors.As(err, &ve) {
		return &broker.Error{Code: broker.CodeUnknown, Message: "admin API /" + path + ": a malformed value: " + ve.Error(), Err: ve}
	}
	return &broker.Error{Code: broker.CodeUnknown, Message: "admin API /" + path + ": the answer is not an ATOM feed: " + err.Error(), Err: err}
}

// title is an entry's title: the entity's name.
func title(e atom.Entry) string {
	if e.Title == nil {
		return ""
	}
	return e.Title.Text
}

func queueOf(e atom.Entry) *atom.QueueDescription {
	if e.Content == nil {
		return nil
	}
	return e.Content.Queue
}

func topicOf(e atom.Entry) *atom.TopicDescription {
	if e.Content == nil {
		return nil
	}
	return e.Content.Topic
}

func subscriptionOf(e atom.Entry) *atom.SubscriptionDescription {
	if e.Content == nil {
		return nil
	}
	return e.Content.Subscription
}

// queueEntity converts a QueueDescription.
func queueEntity(path string, d *atom.QueueDescription) broker.Entity {
	e := newEntity(path, broker.KindQueue, d.Settings(), times{d.CreatedAt, d.UpdatedAt, d.AccessedAt}, d.AuthorizationRules)
	e.Counts = counts(d.CountDetails, d.MessageCount, d.SizeInBytes)
	return e
}

// topicEntity converts a TopicDescription. The counts are the
// subscriptions'; only the size is the topic's own.
func topicEntity(path string, d *atom.TopicDescription) broker.Entity {
	e := newEntity(path, broker.KindTopic, d.Settings(), times{d.CreatedAt, d.UpdatedAt, d.AccessedAt}, d.AuthorizationRules)
	e.Counts.SizeBytes = int64(d.SizeInBytes)
	return e
}

// subscriptionEntity converts a SubscriptionDescription.
func subscriptionEntity(path string, d *atom.SubscriptionDescription) broker.Entity {
	e := newEntity(path, broker.KindSubscription, d.Settings(), times{d.CreatedAt, d.UpdatedAt, d.AccessedAt}, atom.AuthorizationRules{})
	e.Counts = counts(d.CountDetails, d.MessageCount, 0)
	return e
}

// times are a description's CreatedAt, UpdatedAt and AccessedAt.
type times struct{ created, updated, accessed atom.Time }

// newEntity converts what every description has. A setting absent from
// the description is zero (the broker's default), except
// EnableBatchedOperations, true when absent.
func newEntity(path string, kind broker.EntityKind, d atom.Settings, t times, rules atom.AuthorizationRules) broker.Entity {
	e := broker.Entity{Path: path, Kind: kind, CreatedAt: t.created.Time, UpdatedAt: t.updated.Time, AccessedAt: t.accessed.Time}
	if d.UserMetadata != nil {
		e.UserMetadata = *d.UserMetadata
	}
	e.Settings = broker.EntitySettings{
		LockDuration:                        duration(d.LockDuration),
		MaxDeliveryCount:                    int32(min(integer(d.MaxDeliveryCount), math.MaxInt32)),
		DefaultMessageTimeToLive:            duration(d.DefaultMessageTimeToLive),
		DeadLetteringOnMessageExpiration:    boolean(d.DeadLetteringOnMessageExpiration, false),
		RequiresDuplicateDetection:          boolean(d.RequiresDuplicateDetection, false),
		DuplicateDetectionHistoryTimeWindow: duration(d.DuplicateDetectionHistoryTimeWindow),
		RequiresSession:                     boolean(d.RequiresSession, false),
		MaxSizeInMegabytes:                  integer(d.MaxSizeInMegabytes),
		MaxMessageSizeInKilobytes:           integer(d.MaxMessageSizeInKilobytes),
		AutoDeleteOnIdle:                    duration(d.AutoDeleteOnIdle),
		EnablePartitioning:                  boolean(d.EnablePartitioning, false),
		DisableBatchedOperations:            !boolean(d.EnableBatchedOperations, true),
	}
	e.Settings.ForwardTo, e.Settings.ForwardToURI = forwardTarget(d.ForwardTo)
	e.Settings.ForwardDeadLetteredMessagesTo, e.Settings.ForwardDeadLetteredMessagesToURI = forwardTarget(d.ForwardDeadLetteredMessagesTo)
	// A status this client does not know (Creating, Restoring...) shows as
	// Active: the dashboard only marks the ones that refuse operations.
	if d.Status != nil {
		e.Settings.Status, _ = broker.ParseEntityStatus(strings.TrimSpace(*d.Status))
	}
	for _, r := range rules.Rules {
		rule := broker.AuthorizationRule{KeyName: r.KeyName, PrimaryKey: r.PrimaryKey, SecondaryKey: r.SecondaryKey}
		if r.CreatedTime != nil {
			rule.CreatedTime = r.CreatedTime.Time
		}
		if r.ModifiedTime != nil {
			rule.ModifiedTime = r.ModifiedTime.Time
		}
		for _, name := range r.Rights {
			right, _ := broker.ParseAccessRight(strings.TrimSpace(name))
			rule.Rights |= right
		}
		e.AuthorizationRules = append(e.AuthorizationRules, rule)
	}
	return e
}

// counts converts CountDetails. Deferred messages are what MessageCount
// holds beyond the counted details.
func counts(cd atom.CountDetails, messages, size atom.Int) broker.Counts {
	c := broker.Counts{
		Active:               int64(cd.ActiveMessageCount),
		Scheduled:            int64(cd.ScheduledMessageCount),
		DeadLettered:         int64(cd.DeadLetterMessageCount),
		Transfer:             int64(cd.TransferMessageCount),
		TransferDeadLettered: int64(cd.TransferDeadLetterMessageCount),
		SizeBytes:            int64(size),
	}
	c.Deferred = max(int64(messages)-c.Active-c.Scheduled-c.DeadLettered-c.Transfer-c.TransferDeadLettered, 0)
	return c
}

// forwardTarget splits a forwarding setting into its entity path and, for
// an absolute URI, the URI.
func forwardTarget(v *string) (path, uri string) {
	if v == nil || *v == "" {
		return "", ""
	}
	if _, rest, ok := strings.Cut(*v, "://"); ok {
		_, p, _ := strings.Cut(rest, "/")
		return strings.Trim(p, "/"), strings.TrimSpace(*v)
	}
	return strings.Trim(*v, "/"), ""
}

// duration reads an optional duration; absent is zero.
func duration(d *atom.Duration) time.Duration {
	if d == nil {
		return 0
	}
	return time.Duration(*d)
}

// integer reads an optional integer; absent is zero.
func integer(n *atom.Int) int64 {
	if n == nil {
		return 0
	}
	return int64(*n)
}

// boolean reads an optional boolean; absent is the given default.
func boolean(b *atom.Bool, absent bool) bool {
	if b == nil {
		return absent
	}
	return bool(*b)
}

// Entities lists queues, topics and subscriptions with their counts from
// the admin API. Locked counts the locks this client holds (taken out of
// Active, or Deferred for deferred messages received by sequence number).
// When the credential may not list (401, 403) or the admin API cannot be
// reached, it returns the configured entities (EntityPath, Config.Entities)
// with only the Locked count, and Notice says why.
func (c *Client) Entities(ctx context.Context) ([]broker.Entity, error) {
	ctx, cancel := c.opCtx(ctx)
	defer cancel()
	if c.admin == nil {
		c.setNotice("")
		return c.configuredEntities(), nil
	}
	list, aerr := c.admin.cached(ctx)
	if aerr != nil {
		if aerr.status == http.StatusUnauthorized || aerr.status == http.StatusForbidden || aerr.status == 0 {
			names := c.configuredEntities()
			if len(names) == 0 {
				return nil, aerr.err
			}
			why := "counts unavailable: " + aerr.err.Message
			if aerr.status != 0 {
				why = "counts unavailable: the credential may not list entities (it lacks Manage rights)"
			}
			c.setNotice(why)
			return names, nil
		}
		return nil, aerr.err
	}
	c.setNotice("")
	now := c.clock.Now()
	c.mu.Lock()
	for _, e := range list {
		c.counts[lower(e.Path)] = countsAt{counts: e.Counts, at: now}
	}
	c.mu.Unlock()
	for i := range list {
		c.addLockCounts(&list[i], now)
	}
	return list, nil
}

// cached runs entities unless a refusal is fresh.
func (a *adminClient) cached(ctx context.Context) ([]broker.Entity, *adminError) {
	a.mu.Lock()
	if !a.deniedAt.IsZero() && a.c.clock.Since(a.deniedAt) < adminDeniedFor {
		aerr := &adminError{status: a.deniedStatus, err: &broker.Error{Code: a.deniedCode, Message: a.deniedWhy}}
		a.mu.Unlock()
		return nil, aerr
	}
	a.mu.Unlock()
	list, aerr := a.entities(ctx)
	if aerr != nil && (aerr.status == http.StatusUnauthorized || aerr.status == http.StatusForbidden || aerr.status == 0) {
		a.mu.Lock()
		a.deniedAt, a.deniedWhy, a.deniedStatus, a.deniedCode = a.c.clock.Now(), aerr.err.Message, aerr.status, aerr.err.Code
		a.mu.Unlock()
	}
	return list, aerr
}

// configuredEntities returns EntityPath and Config.Entities as entities
// whose counts are unknown (broker.Counts.Unknown), except the locks this
// client holds.
func (c *Client) configuredEntities() []broker.Entity {
	seen := map[string]bool{}
	var out []broker.Entity
	now := c.clock.Now()
	for _, name := range append([]string{c.cfg.Conn.EntityPath}, c.cfg.Entities...) {
		name = strings.TrimSpace(name)
		if c.cfg.serviceBus() {
			name = strings.Trim(name, "/")
		}
		if name == "" || seen[lower(name)] {
			continue
		}
		seen[lower(name)] = true
		e := broker.Entity{Path: name, Kind: broker.KindQueue, Counts: broker.Counts{Unknown: true}}
		if _, _, ok := broker.SplitSubscriptionPath(name); ok {
			e.Kind = broker.KindSubscription
		}
		c.addLockCounts(&e, now)
		out = append(out, e)
	}
	return out
}

// addLockCounts moves the locks this client holds on e into Locked.
func (c *Client) addLockCounts(e *broker.Entity, now time.Time) {
	if e.Kind == broker.KindTopic {
		return
	}
	address := e.Path
	if !c.cfg.serviceBus() {
		address = c.genericAddress(e.Path, false)
	}
	for _, m := range c.locks.held(address, now) {
		e.Counts.Locked++
		if m.State == broker.StateDeferred {
			if e.Counts.Deferred > 0 {
				e.Counts.Deferred--
			}
		} else if e.Counts.Active > 0 {
			e.Counts.Active--
		}
	}
}

// lower is strings.ToLower, for map keys of paths.
func lower(s string) string { return strings.ToLower(s) }
