package wire

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"reflect"
	"sync"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/peeklock/peeklock/broker"
)

// testServer is a minimal AMQP 1.0 peer built only from this package: it
// accepts messages on any address and delivers one prepared message to
// every receiver link, so go-amqp (the client the Service Bus SDK uses)
// checks our frames end to end.
type testServer struct {
	conn    net.Conn
	deliver []byte // encoded message to send to receivers

	mu       sync.Mutex
	received []*broker.Message // messages the client sent
	settled  []DeliveryState   // outcomes the client sent for our deliveries
	mechs    []Symbol          // mechanism the client chose
	attaches []*Attach         // attaches the client sent
	err      error
}

func (s *testServer) write(typ FrameType, ch uint16, p Performative) error {
	b, err := AppendFrame(nil, typ, ch, p)
	if err != nil {
		return err
	}
	_, err = s.conn.Write(b)
	return err
}

func (s *testServer) run() {
	err := s.serve()
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
	s.conn.Close()
}

func (s *testServer) serve() error {
	r := NewFrameReader(s.conn, MinMaxFrameSize)
	h, err := r.ReadProtocolHeader()
	if err != nil || h != HeaderSASL {
		return fmt.Errorf("first protocol header %+v, %v", h, err)
	}
	if _, err := s.conn.Write(HeaderSASL.Append(nil)); err != nil {
		return err
	}
	if err := s.write(FrameSASL, 0, &SASLMechanisms{Mechanisms: []Symbol{MechanismAnonymous, MechanismPlain}}); err != nil {
		return err
	}
	fr, err := r.ReadFrame()
	if err != nil {
		return err
	}
	init, ok := fr.Body.(*SASLInit)
	if !ok {
		return fmt.Errorf("want sasl-init, got %T", fr.Body)
	}
	s.mu.Lock()
	s.mechs = append(s.mechs, init.Mechanism)
	s.mu.Unlock()
	if err := s.write(FrameSASL, 0, &SASLOutcome{Code: SASLOK}); err != nil {
		return err
	}
	if h, err := r.ReadProtocolHeader(); err != nil || h != HeaderAMQP {
		return fmt.Errorf("second protocol header %+v, %v", h, err)
	}
	if _, err := s.conn.Write(HeaderAMQP.Append(nil)); err != nil {
		return err
	}
	fr, err = r.ReadFrame()
	if err != nil {
		return err
	}
	open, ok := fr.Body.(*Open)
	if !ok {
		return fmt.Errorf("want open, got %T", fr.Body)
	}
	r.SetMaxFrameSize(65536)
	if err := s.write(FrameAMQP, 0, &Open{ContainerID: "peeklock-test", MaxFrameSize: min(65536, open.FrameSizeMax()), ChannelMax: Some[uint16](15)}); err != nil {
		return err
	}

	type session struct{ nextIn, nextOut uint32 }
	sessions := map[uint16]*session{}
	receivers := map[uint32]bool{} // our sender links (client receivers), by handle
	partial := map[uint32][]byte{} // payloads of multi-frame deliveries, by handle
	peerMax := open.FrameSizeMax()
	for {
		fr, err := r.ReadFrame()
		if err != nil {
			return err
		}
		ch := fr.Channel
		switch p := fr.Body.(type) {
		case nil: // heartbeat
		case *Begin:
			sessions[ch] = &session{nextIn: p.NextOutgoingID}
			if err := s.write(FrameAMQP, ch, &Begin{RemoteChannel: Some(ch), NextOutgoingID: 0, IncomingWindow: 5000, OutgoingWindow: 5000, HandleMax: Some[uint32](63)}); err != nil {
				return err
			}
		case *Attach:
			s.mu.Lock()
			s.attaches = append(s.attaches, p)
			s.mu.Unlock()
			reply := &Attach{Name: p.Name, Handle: p.Handle, Role: !p.Role, SndSettleMode: p.SndSettleMode,
				RcvSettleMode: p.RcvSettleMode, Source: p.Source, Target: p.Target, MaxMessageSize: 1 << 20,
				Properties: Map{{Symbol("com.microsoft:tracking-id"), "t-1"}}}
			if err := s.write(FrameAMQP, ch, reply); err != nil {
				return err
			}
			if p.Role == RoleSender {
				ss := sessions[ch]
				if err := s.write(FrameAMQP, ch, &Flow{NextIncomingID: Some(ss.nextIn), IncomingWindow: 5000, NextOutgoingID: ss.nextOut,
					OutgoingWindow: 5000, Handle: Some(p.Handle), DeliveryCount: Some(p.InitialDeliveryCount), LinkCredit: Some[uint32](100)}); err != nil {
					return err
				}
			} else {
				receivers[p.Handle] = true
			}
		case *Flow:
			if !p.Handle.Set || !receivers[p.Handle.Value] || p.LinkCredit.Value == 0 {
				continue
			}
			receivers[p.Handle.Value] = false // deliver once
			ss := sessions[ch]
			tag := DeliveryTag(lockTok)
			b, _, err := AppendTransferFrames(nil, ch, &Transfer{Handle: p.Handle.Value, DeliveryID: Some(ss.nextOut), DeliveryTag: tag[:],
				MessageFormat: Some[uint32](0), Payload: s.deliver}, peerMax)
			if err != nil {
				return err
			}
			if _, err := s.conn.Write(b); err != nil {
				return err
			}
			ss.nextOut++
		case *Transfer:
			ss := sessions[ch]
			ss.nextIn++
			payload := append(partial[p.Handle], p.Payload...)
			if p.More {
				partial[p.Handle] = payload
				continue
			}
			delete(partial, p.Handle)
			m, err := DecodeMessage(payload)
			if err != nil {
				return err
			}
			s.mu.Lock()
			s.received = append(s.received, m)
			s.mu.Unlock()
			if !p.Settled {
				if err := s.write(FrameAMQP, ch, &Disposition{Role: RoleReceiver, First: p.DeliveryID.Value, Settled: true, State: Accepted{}}); err != nil {
					return err
				}
			}
		case *Disposition:
			s.mu.Lock()
			s.settled = append(s.settled, p.State)
			s.mu.Unlock()
			if !p.Settled {
				if err := s.write(FrameAMQP, ch, &Disposition{Role: RoleSender, First: p.First, Last: p.Last, Settled: true, State: p.State}); err != nil {
					return err
				}
			}
		case *Detach:
			if err := s.write(FrameAMQP, ch, &Detach{Handle: p.Handle, Closed: true}); err != nil {
				return err
			}
		case *End:
			if err := s.write(FrameAMQP, ch, &End{}); err != nil {
				return err
			}
		case *Close:
			return s.write(FrameAMQP, 0, &Close{})
		default:
			return fmt.Errorf("unexpected %T", p)
		}
	}
}

func TestGoAMQPClientAgainstCodec(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	big := fullMessage()
	big.Body = bytes.Repeat([]byte("0123456789abcdef"), 10000) // 160 KB: several frames
	big.DataSections = nil
	big.AMQP = nil
	srv := &testServer{deliver: EncodeMessage(nil, big, EncodeOptions{DeliveryCount: true})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		srv.conn = c
		srv.run()
	}()

	conn, err := amqp.Dial(ctx, "amqp://"+ln.Addr().String(), &amqp.ConnOptions{SASLType: amqp.SASLTypeAnonymous(), ContainerID: "client-1"})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := conn.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	snd, err := sess.NewSender(ctx, "q1", &amqp.SenderOptions{SettlementMode: amqp.SenderSettleModeMixed.Ptr(), RequestedReceiverSettleMode: amqp.ReceiverSettleModeFirst.Ptr()})
	if err != nil {
		t.Fatal(err)
	}
	if got := snd.MaxMessageSize(); got != 1<<20 {
		t.Errorf("sender max message size %d", got)
	}
	out := amqpFull()
	out.Data = [][]byte{big.Body[:100000], big.Body[100000:]}
	out.DeliveryAnnotations = nil
	out.Header = &amqp.MessageHeader{TTL: 90 * time.Second}
	if err := snd.Send(ctx, out, nil); err != nil {
		t.Fatalf("send: %v", err)
	}

	rcv, err := sess.NewReceiver(ctx, "q1", &amqp.ReceiverOptions{SettlementMode: amqp.ReceiverSettleModeSecond.Ptr(), Credit: 10})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := rcv.Receive(ctx, nil)
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	tag := DeliveryTag(lockTok)
	if !reflect.DeepEqual(msg.DeliveryTag, tag[:]) {
		t.Errorf("delivery tag % x, want % x", msg.DeliveryTag, tag)
	}
	if msg.Header == nil || msg.Header.DeliveryCount != 2 || msg.Header.TTL != 90*time.Second {
		t.Errorf("header %+v", msg.Header)
	}
	if seq := msg.Annotations["x-opt-sequence-number"]; seq != int64(42) {
		t.Errorf("sequence number %#v", seq)
	}
	if !bytes.Equal(msg.GetData(), big.Body) || msg.Properties.MessageID != "id-1" {
		t.Errorf("data of %d bytes, id %v", len(msg.GetData()), msg.Properties.MessageID)
	}
	if err := rcv.ModifyMessage(ctx, msg, &amqp.ModifyMessageOptions{UndeliverableHere: true, Annotations: amqp.Annotations{"k": "v"}}); err != nil {
		t.Fatalf("modify (defer): %v", err)
	}
	if err := rcv.Close(ctx); err != nil {
		t.Fatalf("close receiver: %v", err)
	}
	if err := snd.Close(ctx); err != nil {
		t.Fatalf("close sender: %v", err)
	}
	if err := sess.Close(ctx); err != nil {
		t.Fatalf("close session: %v", err)
	}
	if err := conn.Close(); err != nil {
		t.Fatalf("close connection: %v", err)
	}
	<-done

	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.err != nil {
		t.Fatalf("server: %v", srv.err)
	}
	if !reflect.DeepEqual(srv.mechs, []Symbol{MechanismAnonymous}) {
		t.Errorf("mechanisms %v", srv.mechs)
	}
	if len(srv.received) != 1 {
		t.Fatalf("server received %d messages", len(srv.received))
	}
	got := srv.received[0]
	want := fullMessage()
	want.Body = big.Body
	want.DataSections = []int{100000, 60000} // the two sections out carries
	want.AMQP.HasPriority = true             // go-amqp writes its header's priority, 0 here
	delete(want.ApplicationProperties, "d")
	want.LockToken, want.DeliveryCount = broker.LockToken{}, 0
	want.Size = got.Size
	if !reflect.DeepEqual(got, want) {
		t.Errorf("server decoded:\n got %#v\nwant %#v", got, want)
	}
	wantStates := []DeliveryState{Modified{UndeliverableHere: true, MessageAnnotations: Map{{Symbol("k"), "v"}}}}
	if !reflect.DeepEqual(srv.settled, wantStates) {
		t.Errorf("outcomes %#v, want %#v", srv.settled, wantStates)
	}
	if len(srv.attaches) != 2 {
		t.Fatalf("%d attaches", len(srv.attaches))
	}
	a := srv.attaches[1]
	if a.Role != RoleReceiver || a.Source == nil || a.Source.Address != "q1" || a.RcvSettleMode != Some(ReceiverSettleSecond) {
		t.Errorf("receiver attach %+v source %+v", a, a.Source)
	}
}
