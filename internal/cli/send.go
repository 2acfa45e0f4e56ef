package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/model"
)

// sendFlags are what send puts on the message.
type sendFlags struct {
	bodyFile      string
	messageID     string
	correlationID string
	subject       string
	contentType   string
	session       string
	partitionKey  string
	replyTo       string
	to            string
	properties    []string
	ttl           time.Duration
	schedule      string
}

// newSendCommand returns `peeklock send`.
func newSendCommand(env environ) *cobra.Command {
	e := endpointFlags{env: env}
	var s sendFlags
	cmd := &cobra.Command{
		Use:   "send ENTITY [BODY]",
		Short: "Send a message",
		Long: `peeklock send — send one message to a queue or topic.

The body is the argument, or the file --body-file names ("-" for stdin), or stdin when it is not
a terminal. --property NAME=VALUE (repeatable) sets application properties (strings);
--ttl a time to live; --schedule a time (RFC 3339) or a delay (+30s) to schedule it for;
--session its session. The MessageId is new unless --message-id.` + endpointHelp,
		Example: `  peeklock send orders '{"order":42}' --content-type application/json --data ./data

  # from a file, with properties, in a session, in five minutes
  peeklock send orders --body-file order.json --property tenant=acme --session cart-7 --schedule +5m -c prod

  # from a pipe
  echo hello | peeklock send orders --ttl 10m`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 2 {
				return usagef("send: unexpected argument %q (quote a body with spaces)", args[2])
			}
			return oneEntity(cmd, args[:min(len(args), 1)])
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			msg, at, err := s.message(args[1:], cmd.InOrStdin())
			if err != nil {
				return err
			}
			c, err := e.open(cmd.Context(), "send", args[0], true)
			if err != nil {
				return err
			}
			defer c.Close()
			return runSend(cmd.Context(), c, cmd.OutOrStdout(), e.output, args[0], msg, at)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&s.bodyFile, "body-file", "", `read the body from this file ("-": stdin)`)
	fs.StringVar(&s.messageID, "message-id", "", "the MessageId (default: a new one)")
	fs.StringVar(&s.correlationID, "correlation-id", "", "the CorrelationId")
	fs.StringVar(&s.subject, "subject", "", "the Subject (Label)")
	fs.StringVar(&s.contentType, "content-type", "", "the ContentType")
	fs.StringVar(&s.session, "session", "", "the SessionId")
	fs.StringVar(&s.partitionKey, "partition-key", "", "the PartitionKey")
	fs.StringVar(&s.replyTo, "reply-to", "", "the ReplyTo address")
	fs.StringVar(&s.to, "to", "", "the To address")
	fs.StringArrayVarP(&s.properties, "property", "p", nil, "an application property NAME=VALUE; repeat for more")
	fs.DurationVar(&s.ttl, "ttl", 0, "the time to live (default: the entity's)")
	fs.StringVar(&s.schedule, "schedule", "", "schedule it: an RFC 3339 time, or a delay such as +30s")
	e.register(fs, outTable)
	return cmd
}

// message builds the message of the flags and the body argument (or file,
// or stdin), and the time to schedule it for (zero: now).
func (s *sendFlags) message(bodyArg []string, stdin io.Reader) (*broker.Message, time.Time, error) {
	m := &broker.Message{
		MessageID: s.messageID, CorrelationID: s.correlationID, Subject: s.subject, ContentType: s.contentType,
		SessionID: s.session, PartitionKey: s.partitionKey, ReplyTo: s.replyTo, To: s.to, BodyKind: broker.BodyData,
	}
	if m.MessageID == "" {
		m.MessageID = uuid.NewString()
	}
	if s.ttl < 0 {
		return nil, time.Time{}, usagef("--ttl %s: a time to live is positive", s.ttl)
	}
	m.TimeToLive = s.ttl
	for _, p := range s.properties {
		k, v, ok := strings.Cut(p, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, time.Time{}, usagef("--property %q: want NAME=VALUE", p)
		}
		if m.ApplicationProperties == nil {
			m.ApplicationProperties = make(map[string]any)
		}
		m.ApplicationProperties[strings.TrimSpace(k)] = v
	}
	at, err := model.ParseSchedule(s.schedule, time.Now())
	if err != nil {
		var ae *model.ActionError
		if errors.As(err, &ae) {
			return nil, time.Time{}, usagef("--schedule: %s", ae.Reason)
		}
		return nil, time.Time{}, usagef("--schedule: %v", err)
	}
	body, err := s.body(bodyArg, stdin)
	if err != nil {
		return nil, time.Time{}, err
	}
	m.Body = body
	return m, at, nil
}

// body reads the body: the argument, --body-file, or stdin when it is not
// a terminal.
func (s *sendFlags) body(arg []string, stdin io.Reader) ([]byte, error) {
	switch {
	case len(arg) == 1 && s.bodyFile != "":
		return nil, usagef("send: give the body as an argument or --body-file, not both")
	case len(arg) == 1:
		return []byte(arg[0]), nil
	case s.bodyFile == "-":
		return readAll(stdin, "stdin")
	case s.bodyFile != "":
		b, err := os.ReadFile(s.bodyFile)
		if err != nil {
			return nil, usagef("--body-file: %v", err)
		}
		return b, nil
	}
	if f, ok := stdin.(*os.File); ok && isTerminal(f) {
		return nil, usagef("send: no body (give it as an argument, --body-file FILE, or on stdin)")
	}
	return readAll(stdin, "stdin")
}

func readAll(r io.Reader, what string) ([]byte, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read the body from %s: %w", what, err)
	}
	return b, nil
}

// sentJSON is what send writes in json and jsonl.
type sentJSON struct {
	Entity                  string     `json:"Entity"`
	MessageID               string     `json:"MessageId"`
	ScheduledEnqueueTimeUtc *time.Time `json:"ScheduledEnqueueTimeUtc,omitempty"`
	SequenceNumber          int64      `json:"SequenceNumber,omitempty"`
}

// runSend sends (or schedules) msg and says so.
func runSend(ctx context.Context, c broker.Client, w io.Writer, format, entity string, msg *broker.Message, at time.Time) error {
	out := sentJSON{Entity: entity, MessageID: msg.MessageID}
	if at.IsZero() {
		if err := c.Send(ctx, entity, []*broker.Message{msg}); err != nil {
			return fmt.Errorf("send to %s: %w", entity, err)
		}
	} else {
		seqs, err := c.Schedule(ctx, entity, at, []*broker.Message{msg})
		if err != nil {
			return fmt.Errorf("schedule on %s: %w", entity, err)
		}
		u := at.UTC()
		out.ScheduledEnqueueTimeUtc = &u
		if len(seqs) == 1 {
			out.SequenceNumber = seqs[0]
		}
	}
	return writeResult(w, format, out, func() string {
		if out.ScheduledEnqueueTimeUtc != nil {
			return fmt.Sprintf("scheduled %s on %s for %s (sequence number %d)", out.MessageID, entity, out.ScheduledEnqueueTimeUtc.Format(time.RFC3339), out.SequenceNumber)
		}
		return fmt.Sprintf("sent %s to %s", out.MessageID, entity)
	})
}
