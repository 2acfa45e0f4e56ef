package engine_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// The crash test runs a durable engine under load in a child process (this
// test binary again, running TestCrashChild), kills it with SIGKILL at a
// random moment, restarts it on the same directory, and after the last round
// checks what the child reported against what is stored:
//
//   - every send that was acknowledged is stored, or was completed;
//   - no message whose completion was acknowledged is received again or
//     stored;
//   - a sequence number belongs to one message only, and numbers handed out
//     after a restart are above every number seen before it;
//   - after every restart, each message sent to the topic is in every
//     subscription whose rules match it or in none of them (a topic send is
//     all or nothing), under one sequence number, and in all of them when
//     its send was acknowledged;
//   - the stored state of a session is the last one whose set was
//     acknowledged, or the one set after it (in flight at the kill).
//
// The child writes one line per event to stdout, after the call returned:
//
//	READY                        the engine is open and the load starts
//	S <message id> <seq>         Send or Schedule returned (seq 0: Send)
//	R <message id> <seq>         the message was received under peek-lock
//	C <message id> <seq>         its Complete returned
//	T <message id> <seq>         a Send to the topic returned (seq 0)
//	X r<round>-<n> 0             SetSessionState of that value returned
//	E <text>                     the child failed
//
// A line is a single write of less than PIPE_BUF bytes, so a kill never
// leaves half a line.

const (
	crashDirEnv   = "PEEKLOCK_CRASH_DIR"
	crashRoundEnv = "PEEKLOCK_CRASH_ROUND"
	crashQueue    = "crash"
	crashTopic    = "crashtopic"
	crashSessions = "crash-sessions" // a session-aware queue
	crashSession  = "st"             // the session whose state the child sets
	crashRounds   = 5
)

func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test restarts a child process five times")
	}
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d", seed)

	var events []crashEvent
	topicSent := make(map[string]bool)
	for round := range crashRounds {
		d := 100*time.Millisecond + time.Duration(rng.Int64N(int64(400*time.Millisecond)))
		for _, ev := range runCrashRound(t, dir, round, d) {
			if ev.kind == 'T' {
				topicSent[ev.id] = true
				continue
			}
			events = append(events, ev)
		}
		checkCrashTopic(t, dir, round, topicSent)
	}

	s, err := store.OpenPebble(dir, store.PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Options{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	stored := storedMessages(t, e)
	checkCrashEvents(t, events, stored)
	state, err := e.SessionState(context.Background(), crashSessions, crashSession)
	if err != nil {
		t.Fatal(err)
	}
	checkCrashState(t, events, string(state))
}

// checkCrashState checks the final session state against the acknowledged
// sets: the child sets r<round>-0, r<round>-1, … one after the other.
func checkCrashState(t *testing.T, events []crashEvent, state string) {
	t.Helper()
	var last crashEvent
	sets := 0
	for _, ev := range events {
		if ev.kind == 'X' {
			last = ev
			sets++
		}
	}
	if sets == 0 {
		t.Fatal("no session state set was acknowledged")
	}
	round, n, ok := parseStateValue(state)
	lastRound, lastN, _ := parseStateValue(last.id)
	switch {
	case state == last.id:
	case ok && round == lastRound && n == lastN+1:
	case ok && round > lastRound && n == 0:
	default:
		t.Fatalf("stored session state %q; the last acknowledged set was %q", state, last.id)
	}
	t.Logf("%d session state sets acknowledged; stored state %q, last acknowledged %q", sets, state, last.id)
}

// parseStateValue splits a session state value r<round>-<n>.
func parseStateValue(v string) (round, n int, ok bool) {
	r, c, found := strings.Cut(strings.TrimPrefix(v, "r"), "-")
	round, err1 := strconv.Atoi(r)
	n, err2 := strconv.Atoi(c)
	return round, n, found && err1 == nil && err2 == nil
}

// crashEvent is one line of a child's output.
type crashEvent struct {
	round int
	kind  byte // 'S', 'R', 'C', 'T' or 'X'
	id    string
	seq   int64
}

// runCrashRound starts the child, waits for it to be ready, lets it run for
// d and kills it; it returns the events the child reported.
func runCrashRound(t *testing.T, dir string, round int, d time.Duration) []crashEvent {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1", "-test.timeout=60s")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashRoundEnv+"="+strconv.Itoa(round))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	var events []crashEvent
	var bad []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			if line == "READY" {
				close(ready)
				continue
			}
			ev, ok := parseCrashLine(round, line)
			if !ok {
				bad = append(bad, line)
				continue
			}
			events = append(events, ev)
		}
	}()
	select {
	case <-ready:
	case <-done:
	case <-time.After(15 * time.Second):
	}
	time.Sleep(d)
	_ = cmd.Process.Kill() // SIGKILL
	<-done
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != -1 {
		t.Fatalf("round %d: the child ended by itself (%v) instead of being killed; bad lines %q; stderr:\n%s", round, err, bad, stderr.String())
	}
	if len(bad) > 0 {
		t.Fatalf("round %d: unexpected output %q; stderr:\n%s", round, bad, stderr.String())
	}
	var n [256]int
	for _, ev := range events {
		n[ev.kind]++
	}
	t.Logf("round %d: killed after %v: %d sends, %d receives, %d completes, %d topic sends acknowledged",
		round, d.Round(time.Millisecond), n['S'], n['R'], n['C'], n['T'])
	return events
}

func parseCrashLine(round int, line string) (crashEvent, bool) {
	f := strings.Fields(line)
	if len(f) != 3 || len(f[0]) != 1 || !strings.Contains("SRCTX", f[0]) {
		return crashEvent{}, false
	}
	seq, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return crashEvent{}, false
	}
	return crashEvent{round: round, kind: f[0][0], id: f[1], seq: seq}, true
}

// sentRound returns the round a message id was sent in ("r3-s1-42": 3).
func sentRound(id string) int {
	r, _, _ := strings.Cut(strings.TrimPrefix(id, "r"), "-")
	n, err := strconv.Atoi(r)
	if err != nil {
		return -1
	}
	return n
}

// storedMessages browses every category of the queue: message id -> seq.
func storedMessages(t *testing.T, e *engine.Engine) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	stored := make(map[string]int64)
	for _, cat := range broker.Categories {
		from := int64(0)
		for {
			page, err := e.Browse(ctx, broker.BrowseRequest{Entity: crashQueue, Category: cat, FromSequence: from, Max: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			for _, m := range page {
				if old, ok := stored[m.MessageID]; ok {
					t.Fatalf("message %s stored twice, as %d and %d", m.MessageID, old, m.SequenceNumber)
				}
				stored[m.MessageID] = m.SequenceNumber
			}
			from = page[len(page)-1].SequenceNumber + 1
		}
	}
	return stored
}

func checkCrashEvents(t *testing.T, events []crashEvent, stored map[string]int64) {
	t.Helper()
	seqOf := make(map[string]int64) // message id -> seq, from every observation
	idOf := make(map[int64]string)  // seq -> message id
	observe := func(id string, seq int64, where string) {
		if seq == 0 {
			return
		}
		if old, ok := seqOf[id]; ok && old != seq {
			t.Fatalf("message %s seen with sequence numbers %d and %d (%s)", id, old, seq, where)
		}
		if old, ok := idOf[seq]; ok && old != id {
			t.Fatalf("sequence number %d used for %s and %s (%s)", seq, old, id, where)
		}
		seqOf[id], idOf[seq] = seq, id
	}
	sent := make(map[string]bool)
	completed := make(map[string]int) // id -> round of the acknowledged complete
	received := make(map[string]int)  // id -> round it was last received in
	var sends, completes int
	for _, ev := range events {
		observe(ev.id, ev.seq, fmt.Sprintf("%c in round %d", ev.kind, ev.round))
		switch ev.kind {
		case 'S':
			sent[ev.id] = true
			sends++
		case 'R':
			if r, ok := completed[ev.id]; ok {
				t.Fatalf("message %s received in round %d after its complete was acknowledged in round %d", ev.id, ev.round, r)
			}
			received[ev.id] = ev.round
		case 'C':
			completed[ev.id] = ev.round
			completes++
		}
	}
	for id, seq := range stored {
		observe(id, seq, "stored at the end")
		if r, ok := completed[id]; ok {
			t.Fatalf("message %s is stored, but its complete was acknowledged in round %d", id, r)
		}
	}
	// A message may be gone without an acknowledged complete when the kill
	// came while its complete was in flight: after it was received.
	inFlight := 0
	for id := range sent {
		if _, ok := stored[id]; ok {
			continue
		}
		if _, ok := completed[id]; ok {
			continue
		}
		if _, ok := received[id]; !ok {
			t.Fatalf("acknowledged send of %s is lost: neither stored, nor received, nor completed", id)
		}
		inFlight++
	}
	// Numbers handed out in a round are above every number seen in the
	// rounds before: a restart never reuses a number.
	maxBefore := make([]int64, crashRounds+1)
	minIn := make([]int64, crashRounds)
	for id, seq := range seqOf {
		r := sentRound(id)
		if r < 0 || r >= crashRounds {
			t.Fatalf("unexpected message id %q", id)
		}
		maxBefore[r+1] = max(maxBefore[r+1], seq)
		if minIn[r] == 0 || seq < minIn[r] {
			minIn[r] = seq
		}
	}
	for r := 1; r <= crashRounds; r++ {
		maxBefore[r] = max(maxBefore[r], maxBefore[r-1])
	}
	for r := 1; r < crashRounds; r++ {
		if minIn[r] != 0 && minIn[r] <= maxBefore[r] {
			t.Fatalf("round %d handed out sequence number %d, not above %d seen before it", r, minIn[r], maxBefore[r])
		}
	}
	if sends == 0 || completes == 0 {
		t.Fatalf("the load did nothing: %d sends and %d completes acknowledged", sends, completes)
	}
	t.Logf("%d sends and %d completes acknowledged over %d rounds; %d messages stored at the end; %d removed by a complete in flight at a kill",
		sends, completes, crashRounds, len(stored), inFlight)
}

// perSend is the number of messages of each send of the crash test's child.
const perSend = 4

// crashTopicEntities returns the crash test's topic and its subscriptions:
// all1 and all2 take every message, picked those with pick set to true.
func crashTopicEntities() []broker.Entity {
	sub := func(name string, rules ...broker.Rule) broker.Entity {
		return broker.Entity{Path: crashTopic + "/Subscriptions/" + name, Kind: broker.KindSubscription, Rules: rules}
	}
	return []broker.Entity{
		{Path: crashTopic, Kind: broker.KindTopic},
		sub("all1"),
		sub("all2"),
		sub("picked", broker.Rule{Name: "pick", Filter: &broker.CorrelationFilter{Properties: map[string]any{"pick": true}}}),
	}
}

// checkCrashTopic restarts the engine on dir after round and checks the
// topic's subscriptions: each message is in all the subscriptions that
// match it or in none, under one sequence number, and in all of them when
// its send was acknowledged (in sent).
func checkCrashTopic(t *testing.T, dir string, round int, sent map[string]bool) {
	t.Helper()
	s, err := store.OpenPebble(dir, store.PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Options{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	seqs := make(map[string]map[string]int64) // message id -> subscription -> seq
	for _, ent := range crashTopicEntities()[1:] {
		from := int64(0)
		for {
			page, err := e.Browse(ctx, broker.BrowseRequest{Entity: ent.Path, Category: broker.CategoryActive, FromSequence: from, Max: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			for _, m := range page {
				if seqs[m.MessageID] == nil {
					seqs[m.MessageID] = make(map[string]int64)
				}
				if _, ok := seqs[m.MessageID][ent.Path]; ok {
					t.Fatalf("after round %d: message %s is twice in %s", round, m.MessageID, ent.Path)
				}
				seqs[m.MessageID][ent.Path] = m.SequenceNumber
			}
			from = page[len(page)-1].SequenceNumber + 1
		}
	}
	matching := func(id string) []string {
		n, _ := strconv.Atoi(id[strings.LastIndexByte(id, '-')+1:])
		subs := []string{crashTopic + "/Subscriptions/all1", crashTopic + "/Subscriptions/all2"}
		if n%2 == 0 {
			subs = append(subs, crashTopic+"/Subscriptions/picked")
		}
		return subs
	}
	for id, in := range seqs {
		want := matching(id)
		var seq int64
		for _, sub := range want {
			q, ok := in[sub]
			if !ok {
				t.Fatalf("after round %d: message %s is in %v but not in %s, which matches it", round, id, in, sub)
			}
			if seq != 0 && q != seq {
				t.Fatalf("after round %d: message %s has sequence numbers %v", round, id, in)
			}
			seq = q
		}
		if len(in) != len(want) {
			t.Fatalf("after round %d: message %s is in %v; only %v match it", round, id, in, want)
		}
	}
	for id := range sent {
		if seqs[id] == nil {
			t.Fatalf("after round %d: the acknowledged topic send of %s is in no subscription", round, id)
		}
	}
	t.Logf("after round %d: %d topic messages stored, each in all the subscriptions that match it; %d acknowledged", round, len(seqs), len(sent))
}

// TestCrashChild is the child of TestCrash: it runs the load until it is
// killed.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("run by TestCrash as a child process")
	}
	round, err := strconv.Atoi(os.Getenv(crashRoundEnv))
	if err != nil {
		crashFail("bad round: %v", err)
	}
	s, err := store.OpenPebble(dir, store.PebbleOptions{})
	if err != nil {
		crashFail("open store: %v", err)
	}
	e, err := engine.New(engine.Options{Store: s})
	if err != nil {
		crashFail("engine: %v", err)
	}
	ctx := context.Background()
	if err := e.CreateEntity(ctx, broker.Entity{Path: crashQueue, Kind: broker.KindQueue}); err != nil && !errors.Is(err, broker.ErrAlreadyExists) {
		crashFail("create queue: %v", err)
	}
	for _, ent := range crashTopicEntities() {
		if err := e.CreateEntity(ctx, ent); err != nil && !errors.Is(err, broker.ErrAlreadyExists) {
			crashFail("create %s: %v", ent.Path, err)
		}
	}
	if err := e.CreateEntity(ctx, broker.Entity{Path: crashSessions, Kind: broker.KindQueue,
		Settings: broker.EntitySettings{RequiresSession: true}}); err != nil && !errors.Is(err, broker.ErrAlreadyExists) {
		crashFail("create session queue: %v", err)
	}
	crashLine("READY")

	const topicSenders = 2
	for w := range topicSenders {
		go func() {
			body := bytes.Repeat([]byte{byte(w)}, 512)
			for n := 0; ; n++ {
				msgs := make([]*broker.Message, perSend)
				for i := range msgs {
					msgs[i] = &broker.Message{MessageID: fmt.Sprintf("t%d-s%d-%d-%d", round, w, n, i), Body: body,
						ApplicationProperties: map[string]any{"pick": i%2 == 0}}
				}
				if err := e.Send(ctx, crashTopic, msgs); err != nil {
					crashFail("send to the topic: %v", err)
				}
				for _, m := range msgs {
					crashLine(fmt.Sprintf("T %s 0", m.MessageID))
				}
			}
		}()
	}

	go func() {
		// Locks are not stored: the session is free again after a restart.
		if _, err := e.AcceptSession(ctx, 1, crashSessions, crashSession, 0); err != nil {
			crashFail("accept session: %v", err)
		}
		for n := 0; ; n++ {
			v := fmt.Sprintf("r%d-%d", round, n)
			if err := e.SetSessionState(ctx, 1, crashSessions, crashSession, []byte(v)); err != nil {
				crashFail("set session state: %v", err)
			}
			crashLine("X " + v + " 0")
		}
	}()

	const senders, receivers = 4, 4
	for w := range senders {
		go func() {
			body := bytes.Repeat([]byte{byte(w)}, 512)
			for n := 0; ; n++ {
				msgs := make([]*broker.Message, perSend)
				for i := range msgs {
					msgs[i] = &broker.Message{MessageID: fmt.Sprintf("r%d-s%d-%d-%d", round, w, n, i), Body: body}
				}
				seqs := make([]int64, perSend)
				var err error
				if w%2 == 0 {
					err = e.Send(ctx, crashQueue, msgs)
				} else {
					// A schedule in the past is active at once and tells
					// the sequence numbers.
					seqs, err = e.Schedule(ctx, crashQueue, time.Unix(1, 0), msgs)
				}
				if err != nil {
					crashFail("send: %v", err)
				}
				for i, m := range msgs {
					crashLine(fmt.Sprintf("S %s %d", m.MessageID, seqs[i]))
				}
			}
		}()
	}
	for range receivers {
		go func() {
			for {
				msgs, err := e.Receive(ctx, broker.ReceiveRequest{Entity: crashQueue, Mode: broker.PeekLock, Max: 8, MaxWait: 50 * time.Millisecond})
				if err != nil {
					crashFail("receive: %v", err)
				}
				ss := make([]broker.Settlement, len(msgs))
				for i, m := range msgs {
					crashLine(fmt.Sprintf("R %s %d", m.MessageID, m.SequenceNumber))
					ss[i] = broker.Settlement{Kind: broker.Complete, Entity: crashQueue, Token: m.LockToken}
				}
				errs := e.SettleMany(ctx, ss)
				for i, m := range msgs {
					if errs != nil && errs[i] != nil {
						crashFail("complete %s: %v", m.MessageID, errs[i])
					}
					crashLine(fmt.Sprintf("C %s %d", m.MessageID, m.SequenceNumber))
				}
			}
		}()
	}
	// The parent kills the child long before this.
	time.Sleep(20 * time.Second)
	crashFail("not killed after 20s")
}

var crashOut sync.Mutex

// crashLine writes one line to stdout with a single write.
func crashLine(s string) {
	crashOut.Lock()
	defer crashOut.Unlock()
	_, _ = os.Stdout.WriteString(s + "\n")
}

// crashFail reports a failure of the child and exits; the parent sees an
// exit instead of its kill and prints stderr.
func crashFail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "E "+format+"\n", args...)
	os.Exit(2)
}
