package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

// startServe runs `peeklock serve` in process on free ports and returns
// the emulator connection string and the admin address it printed, and
// stop, which ends it as an interrupt does.
func startServe(t *testing.T, args ...string) (conn, adminAddr string, stop func()) {
	t.Helper()
	// Without --data the local CA goes to the config directory: a temporary one.
	p := launchServe(t, []string{"XDG_CONFIG_HOME=" + t.TempDir()}, append([]string{"--amqp", "127.0.0.1:0", "--admin", "127.0.0.1:0"}, args...)...)
	conn = p.wait(`connection_string="([^"]+)"`)[1]
	adminAddr = p.wait(`msg="admin API ready" addr=(\S+)`)[1]
	return conn, adminAddr, func() {
		if status := p.stop(); status != 0 {
			t.Errorf("serve ended with status %d when interrupted:\n%s", status, p.err.String())
		}
	}
}

// writeConfig writes an emulator Config.json with the given queues (a JSON
// list) into a temporary directory and returns its path.
func writeConfig(t *testing.T, queues string) string {
	t.Helper()
	config := filepath.Join(t.TempDir(), "Config.json")
	body := `{"UserConfig":{"Namespaces":[{"Name":"sbemulatorns","Queues":` + queues + `}],"Logging":{"Type":"File"}}}`
	if err := os.WriteFile(config, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return config
}

// sdkSender returns an official SDK client of the emulator connection
// string conn and a sender to entity; the client closes when the test ends.
func sdkSender(t *testing.T, conn, entity string) (*azservicebus.Client, *azservicebus.Sender) {
	t.Helper()
	client, err := azservicebus.NewClientFromConnectionString(conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = client.Close(ctx)
	})
	sender, err := client.NewSender(entity, nil)
	if err != nil {
		t.Fatal(err)
	}
	return client, sender
}

// TestServeIsAnEmulator runs `peeklock serve` (in process) with an
// emulator Config.json and durable storage, uses it with the official SDK
// through the emulator connection string it prints, restarts it, and finds
// the message it stored still there.
func TestServeIsAnEmulator(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "Config.json")
	if err := os.WriteFile(config, []byte(`{"UserConfig":{"Namespaces":[{"Name":"sbemulatorns",
		"Queues":[{"Name":"queue.1","Properties":{"LockDuration":"PT30S","MaxDeliveryCount":3}}]}],
		"Logging":{"Type":"File"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	conn, adminAddr, stop := startServe(t, "--config", config, "--data", data)

	res, err := http.Get("http://" + adminAddr + "/health")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), `"status":"healthy"`) {
		t.Fatalf("/health: %d %s", res.StatusCode, body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, err := azservicebus.NewClientFromConnectionString(conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	sender, err := client.NewSender("queue.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	id := "kept-across-restart"
	if err := sender.SendMessage(ctx, &azservicebus.Message{MessageID: &id, Body: []byte("hello")}, nil); err != nil {
		t.Fatalf("send through the SDK: %v", err)
	}
	client.Close(ctx)
	stop()

	conn, _, stop = startServe(t, "--config", config, "--data", data)
	defer stop()
	client, err = azservicebus.NewClientFromConnectionString(conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close(ctx)
	receiver, err := client.NewReceiverForQueue("queue.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := receiver.ReceiveMessages(ctx, 1, nil)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("receive after restart: %d messages, %v", len(msgs), err)
	}
	m := msgs[0]
	if m.MessageID != id || string(m.Body) != "hello" || m.SequenceNumber == nil || *m.SequenceNumber != 1 || m.DeliveryCount != 1 {
		t.Fatalf("received %q %q seq %v delivery %d", m.MessageID, m.Body, m.SequenceNumber, m.DeliveryCount)
	}
	if err := receiver.CompleteMessage(ctx, m, nil); err != nil {
		t.Fatalf("complete: %v", err)
	}
}

// TestTmuxConnectToServe runs `peeklock serve` and, in a real terminal,
// `peeklock connect` with the emulator connection string it printed: the
// dashboard on the remote endpoint shows the message an SDK sent, locks it
// with `l`, completes it with `c`, and the broker no longer has it.
func TestTmuxConnectToServe(t *testing.T) {
	bin := buildBinary(t)
	config := writeConfig(t, `[{"Name":"orders","Properties":{"LockDuration":"PT1M"}}]`)
	conn, adminAddr, stop := startServe(t, "--config", config)
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, sender := sdkSender(t, conn, "orders")
	id, subject := "order-42", "order.placed"
	if err := sender.SendMessage(ctx, &azservicebus.Message{MessageID: &id, Subject: &subject, Body: []byte(`{"order":42}`)}, nil); err != nil {
		t.Fatal(err)
	}

	tm := newTmux(t, fmt.Sprintf("env XDG_CONFIG_HOME=%s %s connect '%s' --admin-url http://%s --entity orders",
		t.TempDir(), bin, conn, adminAddr))
	tm.waitFor("the remote queue with its message", has("orders", "Active 1", "order-42", "order.placed", "connected"))
	tm.send("l")
	tm.waitFor("the lock", has("Locked 1", "Active 0"))
	tm.send("2")
	tm.send("c")
	tm.waitFor("the completion", has("Locked 0", "Active 0", "completed"))
	tm.send("q")
	tm.waitFor("the program to exit", has("peeklock exited 0"))

	receiver, err := client.NewReceiverForQueue("orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	peeked, err := receiver.PeekMessages(ctx, 10, nil)
	if err != nil || len(peeked) != 0 {
		t.Fatalf("after the dashboard completed it, peek finds %d messages (%v)", len(peeked), err)
	}
}

// TestDashboardResidentMemory measures the resident memory of the
// dashboard process (`peeklock connect`, in a real terminal) on a
// 1,000,000-message queue served by `peeklock serve --data`. Target: under
// 100 MB. Run with PEEKLOCK_BIG=1; BENCHMARKS.md has the result.
func TestDashboardResidentMemory(t *testing.T) {
	if os.Getenv("PEEKLOCK_BIG") == "" {
		t.Skip("set PEEKLOCK_BIG=1 to store 1,000,000 messages and measure the dashboard's memory")
	}
	bin := buildBinary(t)
	data := t.TempDir()
	fillStore(t, data, "big", 1_000_000)
	conn, adminAddr, stop := startServe(t, "--data", data)
	defer stop()
	tm := newTmux(t, fmt.Sprintf("env XDG_CONFIG_HOME=%s %s connect '%s' --admin-url http://%s --entity big",
		t.TempDir(), bin, conn, adminAddr))
	tm.waitFor("the big queue", has("big", "Active 1.0M", "msg-1"))
	time.Sleep(5 * time.Second) // a few refreshes
	shell := strings.TrimSpace(tm.run("list-panes", "-t", "e2e", "-F", "#{pane_pid}"))
	out, err := exec.Command("pgrep", "-P", shell, "-f", "peeklock").Output()
	if err != nil {
		t.Fatalf("find the dashboard process: %v", err)
	}
	pid := strings.Fields(string(out))[0]
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		t.Fatal(err)
	}
	rss := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindStringSubmatch(string(status))
	t.Logf("dashboard resident memory with a 1,000,000-message queue: %s kB", rss[1])
	tm.send("q")
}

// TestServeKeysAndLimits runs `peeklock serve` with a key of its own and
// room for one connection: the connection string it prints names that key,
// the official SDK works with it, the emulator's default key is refused, and
// a second connection is refused while the first is open.
func TestServeKeysAndLimits(t *testing.T) {
	config := writeConfig(t, `[{"Name":"q","Properties":{}}]`)
	conn, _, stop := startServe(t, "--config", config, "--key", "app=c2VjcmV0", "--key", "ops=b3Bz", "--max-connections", "1")
	defer stop()
	if !strings.Contains(conn, ";SharedAccessKeyName=app;SharedAccessKey=c2VjcmV0;") {
		t.Fatalf("connection string %q does not name the first --key", conn)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// sendOnce sends one message on a connection of its own. With room for
	// one connection, the listener may not have noticed that the previous
	// one closed: send retries while the connection is refused at once.
	sendOnce := func(conn string) error {
		c, err := azservicebus.NewClientFromConnectionString(conn, &azservicebus.ClientOptions{
			RetryOptions: azservicebus.RetryOptions{MaxRetries: -1}})
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		s, err := c.NewSender("q", nil)
		if err != nil {
			return err
		}
		return s.SendMessage(ctx, &azservicebus.Message{Body: []byte("x")}, nil)
	}
	send := func(conn string) (err error) {
		for range 50 {
			if err = sendOnce(conn); err == nil || !strings.Contains(err.Error(), "(connlost)") {
				return err
			}
			time.Sleep(100 * time.Millisecond)
		}
		return err
	}
	if err := send(conn); err != nil {
		t.Fatalf("send with the printed key: %v", err)
	}
	defaultKey := strings.Replace(conn, "SharedAccessKeyName=app;SharedAccessKey=c2VjcmV0", "SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE", 1)
	var sbErr *azservicebus.Error
	if err := send(defaultKey); !errors.As(err, &sbErr) || sbErr.Code != azservicebus.CodeUnauthorizedAccess {
		t.Fatalf("send with the emulator's default key: %v, want unauthorized access", err)
	}

	_, s := sdkSender(t, conn, "q") // the first connection, open to the end
	if err := s.SendMessage(ctx, &azservicebus.Message{Body: []byte("y")}, nil); err != nil {
		t.Fatalf("first connection: %v", err)
	}
	if err := sendOnce(conn); err == nil || !strings.Contains(err.Error(), "(connlost)") {
		t.Fatalf("a second connection beside the first with --max-connections 1: %v, want it closed", err)
	}
}

// TestTmuxSessionsOnServe runs `peeklock connect` in a real terminal against
// `peeklock serve` with a session-aware queue: `l` takes the lock of the
// session of the message under the cursor and locks its first message, the
// status bar shows the session lock, `c` completes it, and quitting releases
// the session so that an SDK session receiver can take it at once and finds
// the other message.
func TestTmuxSessionsOnServe(t *testing.T) {
	bin := buildBinary(t)
	config := writeConfig(t, `[{"Name":"carts","Properties":{"LockDuration":"PT1M","RequiresSession":true}}]`)
	conn, adminAddr, stop := startServe(t, "--config", config)
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, sender := sdkSender(t, conn, "carts")
	for _, id := range []string{"item-1", "item-2"} {
		if err := sender.SendMessage(ctx, &azservicebus.Message{MessageID: &id, SessionID: ptr("cart-7"), Body: []byte(id)}, nil); err != nil {
			t.Fatal(err)
		}
	}

	tm := newTmux(t, fmt.Sprintf("env XDG_CONFIG_HOME=%s %s connect '%s' --admin-url http://%s --entity carts",
		t.TempDir(), bin, conn, adminAddr))
	tm.waitFor("the session queue with its messages", has("carts", "Active 2", "item-1", "item-2", "connected"))
	tm.send("l")
	tm.waitFor("the session lock and a message lock", has(`SESSION "cart-7"`, "Locked 1", "Active 1"))
	tm.send("2")
	tm.send("c")
	tm.waitFor("the completion", has("Locked 0", "Active 1", "completed"))
	tm.send("q")
	tm.waitFor("the program to exit", has("peeklock exited 0"))

	sr, err := client.AcceptSessionForQueue(ctx, "carts", "cart-7", nil)
	if err != nil {
		t.Fatalf("accept the session the dashboard released: %v", err)
	}
	got, err := sr.ReceiveMessages(ctx, 2, nil)
	if err != nil || len(got) != 1 || got[0].MessageID != "item-2" {
		t.Fatalf("the session holds %d messages (%v), want item-2 only", len(got), err)
	}
}

func ptr[T any](v T) *T { return &v }
