package store

import "github.com/peeklock/peeklock/broker"

// checkBatch returns a CodeInvalid error for a batch that no store can
// apply: an unknown op kind, a put without a message, a nil session state,
// or a property or rule parameter of a type the durable store cannot keep.
// Both stores refuse the same batches, so that the memory store never
// accepts what the Pebble store would not.
func checkBatch(b *Batch) error {
	for i := range b.Ops {
		op := &b.Ops[i]
		switch op.Kind {
		case OpPutEntity:
			if err := checkRules(op.Entity.Entity.Rules); err != nil {
				return err
			}
		case OpPutMessage:
			if op.Message == nil {
				return broker.Errorf(broker.CodeInvalid, "put of message %d without a message", op.Loc.Seq)
			}
			if err := checkProps(op.Message.ApplicationProperties, "application property"); err != nil {
				return err
			}
		case OpSetSessionState:
			if op.State == nil {
				return broker.Errorf(broker.CodeInvalid, "state of session %s set to nil; delete it instead", strconvQuote(op.ID))
			}
		case OpDeleteEntity, OpSetSequence, OpPutMeta, OpDeleteMessage, OpDeleteSessionState, OpPutDuplicate, OpDeleteDuplicate:
		default:
			return broker.Errorf(broker.CodeInvalid, "unknown store op kind %d", op.Kind)
		}
	}
	return nil
}
