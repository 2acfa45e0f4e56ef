package remote

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/peeklock/peeklock/broker"
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
	var e struct {
		Detail string `xml:"Detail"`
	}
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

// ATOM documents, matched by local names.
type (
	atomFeed struct {
		Entries []atomEntry `xml:"entry"`
	}
	atomEntry struct {
		Title   string `xml:"title"`
		Content struct {
			Queue        *entityDesc `xml:"QueueDescription"`
			Topic        *entityDesc `xml:"TopicDescription"`
			Subscription *entityDesc `xml:"SubscriptionDescription"`
		} `xml:"content"`
	}
	// entityDesc holds the fields of queue, topic and subscription
	// descriptions that the dashboard shows.
	entityDesc struct {
		LockDuration                        string
		MaxSizeInMegabytes                  int64
		RequiresDuplicateDetection          bool
		RequiresSession                     bool
		DefaultMessageTimeToLive            string
		DeadLetteringOnMessageExpiration    bool
		DuplicateDetectionHistoryTimeWindow string
		MaxDeliveryCount                    int32
		SizeInBytes                         int64
		MessageCount                        int64
		ForwardTo                           string
		ForwardDeadLetteredMessagesTo       string
		MaxMessageSizeInKilobytes           int64
		UserMetadata                        string
		CreatedAt                           string
		UpdatedAt                           string
		AccessedAt                          string
		CountDetails                        struct {
			Active             int64 `xml:"ActiveMessageCount"`
			DeadLetter         int64 `xml:"DeadLetterMessageCount"`
			Scheduled          int64 `xml:"ScheduledMessageCount"`
			Transfer           int64 `xml:"TransferMessageCount"`
			TransferDeadLetter int64 `xml:"TransferDeadLetterMessageCount"`
		}
	}
)

// list fetches every page of a feed.
func (a *adminClient) list(ctx context.Context, path string) ([]atomEntry, *adminError) {
	var all []atomEntry
	for skip := 0; ; skip += adminPageSize {
		q := url.Values{"$skip": {strconv.Itoa(skip)}, "$top": {strconv.Itoa(adminPageSize)}}
		body, aerr := a.get(ctx, path, q)
		if aerr != nil {
			return nil, aerr
		}
		var f atomFeed
		if err := xml.Unmarshal(body, &f); err != nil {
			return nil, &adminError{err: &broker.Error{Code: broker.CodeUnknown, Message: "admin API /" + path + ": the answer is not an ATOM feed: " + err.Error()}}
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
		if e.Content.Queue != nil {
			out = append(out, e.Content.Queue.entity(e.Title, broker.KindQueue, a.c.cfg.Conn.Host))
		}
	}
	subs := make([][]broker.Entity, len(topics))
	errs := make([]*adminError, len(topics))
	sem := make(chan struct{}, adminParallel)
	var wg sync.WaitGroup
	for i, t := range topics {
		if t.Content.Topic == nil {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			list, aerr := a.list(ctx, url.PathEscape(t.Title)+"/Subscriptions")
			if aerr != nil {
				errs[i] = aerr
				return
			}
			for _, s := range list {
				if s.Content.Subscription != nil {
					subs[i] = append(subs[i], s.Content.Subscription.entity(broker.SubscriptionPath(t.Title, s.Title), broker.KindSubscription, a.c.cfg.Conn.Host))
				}
			}
		}()
	}
	wg.Wait()
	for i, t := range topics {
		if t.Content.Topic == nil {
			continue
		}
		if errs[i] != nil {
			return nil, errs[i]
		}
		out = append(out, t.Content.Topic.entity(t.Title, broker.KindTopic, a.c.cfg.Conn.Host))
		out = append(out, subs[i]...)
	}
	return out, nil
}

// entity converts a description. Deferred messages are what MessageCount
// holds beyond the counted details.
func (d *entityDesc) entity(path string, kind broker.EntityKind, host string) broker.Entity {
	cd := d.CountDetails
	e := broker.Entity{Path: path, Kind: kind, UserMetadata: d.UserMetadata,
		CreatedAt: parseAtomTime(d.CreatedAt), UpdatedAt: parseAtomTime(d.UpdatedAt), AccessedAt: parseAtomTime(d.AccessedAt)}
	e.Settings = broker.EntitySettings{
		LockDuration:                        parseISODuration(d.LockDuration),
		MaxDeliveryCount:                    d.MaxDeliveryCount,
		DefaultMessageTimeToLive:            parseISODuration(d.DefaultMessageTimeToLive),
		DeadLetteringOnMessageExpiration:    d.DeadLetteringOnMessageExpiration,
		RequiresDuplicateDetection:          d.RequiresDuplicateDetection,
		DuplicateDetectionHistoryTimeWindow: parseISODuration(d.DuplicateDetectionHistoryTimeWindow),
		RequiresSession:                     d.RequiresSession,
		ForwardTo:                           forwardPath(d.ForwardTo, host),
		ForwardDeadLetteredMessagesTo:       forwardPath(d.ForwardDeadLetteredMessagesTo, host),
		MaxSizeInMegabytes:                  d.MaxSizeInMegabytes,
		MaxMessageSizeInKilobytes:           d.MaxMessageSizeInKilobytes,
	}
	if kind == broker.KindTopic {
		e.Counts.SizeBytes = d.SizeInBytes
		return e
	}
	deferred := d.MessageCount - cd.Active - cd.DeadLetter - cd.Scheduled - cd.Transfer - cd.TransferDeadLetter
	e.Counts = broker.Counts{
		Active:               cd.Active,
		Deferred:             max(deferred, 0),
		Scheduled:            cd.Scheduled,
		DeadLettered:         cd.DeadLetter,
		Transfer:             cd.Transfer,
		TransferDeadLettered: cd.TransferDeadLetter,
		SizeBytes:            d.SizeInBytes,
	}
	return e
}

// parseAtomTime reads a time of an entity description: RFC 3339 with
// optional fractional seconds (Azure writes seven digits), in UTC. The
// "unknown" value 0001-01-01T00:00:00, and anything malformed, is the zero
// time.
func parseAtomTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// forwardPath turns a forwarding URI ("sb://host/q") into an entity path.
func forwardPath(v, host string) string {
	if v == "" {
		return ""
	}
	if _, rest, ok := strings.Cut(v, "://"); ok {
		_, path, _ := strings.Cut(rest, "/")
		return strings.Trim(path, "/")
	}
	_ = host
	return strings.Trim(v, "/")
}

// parseISODuration reads an ISO 8601 duration as the admin API writes it
// (P10675199DT2H48M5.4775807S, PT30S, P14D); values past the largest
// time.Duration saturate, and a malformed value is 0 (the default).
func parseISODuration(s string) time.Duration {
	s = strings.TrimSpace(s)
	if len(s) < 2 || (s[0] != 'P' && s[0] != 'p') {
		return 0
	}
	var total float64 // seconds
	inTime := false
	num := ""
	for _, r := range s[1:] {
		switch {
		case r >= '0' && r <= '9' || r == '.':
			num += string(r)
		case r == 'T' || r == 't':
			inTime = true
		default:
			v, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0
			}
			num = ""
			switch {
			case r == 'D' || r == 'd':
				total += v * 86400
			case r == 'W' || r == 'w':
				total += v * 7 * 86400
			case (r == 'H' || r == 'h') && inTime:
				total += v * 3600
			case (r == 'M' || r == 'm') && inTime:
				total += v * 60
			case (r == 'S' || r == 's') && inTime:
				total += v
			default:
				return 0
			}
		}
	}
	if num != "" {
		return 0
	}
	if total*1e9 >= float64(broker.MaxTimeToLive) {
		return broker.MaxTimeToLive
	}
	return time.Duration(total * 1e9).Round(time.Millisecond)
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
// without counts, except the locks this client holds.
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
		e := broker.Entity{Path: name, Kind: broker.KindQueue}
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
		address = genericAddress(e.Path, false)
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
