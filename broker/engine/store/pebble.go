package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/peeklock/peeklock/broker"
)

// PebbleOptions configure a Pebble store. The zero value is the safe
// default: every Apply is synced to disk before Wait returns.
type PebbleOptions struct {
	// CacheSize is the size of the block cache in bytes; 0 means 64 MiB.
	CacheSize int64
	// MemTableSize is the size of one memtable in bytes; 0 means 16 MiB. A
	// clean Close flushes the memtables; after a crash, Open replays at most
	// a few memtables' worth of write-ahead log. A message deleted while
	// its put is still in the memtable costs no flush or compaction (see
	// singleDeletes); a smaller memtable is a shorter skiplist to insert
	// into: with the durable loop's messages, 16 MiB spent less CPU per
	// message than 64, 32 and 8 MiB.
	MemTableSize uint64
	// BodyCacheSize bounds the memory, in bytes, of the cache of recently
	// put messages that receives read their bodies from (see bodyCache); 0
	// means 8 MiB, a negative size no cache.
	BodyCacheSize int64
	// NoSync turns off the disk sync of each batch: Wait returns at once, and
	// a crash of the machine (or, for the last few milliseconds of writes,
	// of the process) may lose batches that were acknowledged. Only for
	// tests and demos.
	NoSync bool
	// Logger receives Pebble's messages: information at Debug level, errors
	// at Error level. Nil discards them. A fatal Pebble error (its commit
	// pipeline broken, so that nothing written can be trusted to reach the
	// disk) is logged and then ends the process with exit status 1, as
	// Pebble's own default logger does: carrying on would acknowledge writes
	// that may be lost.
	Logger *slog.Logger
	// Observer, when not nil, is told each batch's size and each synced
	// batch's latency (metrics).
	Observer Observer

	// fs replaces the operating system's file system (tests use a
	// crash-simulating in-memory one).
	fs vfs.FS
	// blobRewriteAge replaces the age at which a blob file with garbage
	// may be rewritten (see bodiesApart); 0: blobRewriteAge.
	blobRewriteAge time.Duration
	// misuse, when not nil, is told of every misuse Pebble sees (tests of
	// the single deletes).
	misuse func(pebble.PossibleAPIMisuseInfo)
}

// Defaults of PebbleOptions.
const (
	DefaultPebbleCacheSize     = 64 << 20
	DefaultPebbleMemTableSize  = 16 << 20
	DefaultPebbleBodyCacheSize = 8 << 20
)

// Pebble is a durable Store kept in a Pebble database in one directory.
//
// Apply hands each batch to Pebble's commit pipeline and returns once the
// batch is in the write-ahead log's buffer and visible to readers; Wait then
// waits for the log sync. Pebble's log writer syncs everything queued so far
// with one fsync, so concurrent batches share their syncs (group commit).
type Pebble struct {
	db   *pebble.DB
	sync bool
	dir  string
	obs  Observer // nil: none
	// cache holds the messages of the latest puts; nil: none.
	cache *bodyCache

	// closeMu guards closed; every operation holds it for reading, Close for
	// writing, so Pebble is never used after it is closed.
	closeMu sync.RWMutex
	closed  bool

	bufs  sync.Pool // *[]byte: encoding scratch space
	plans sync.Pool // *[]uint8: planDeletes' scratch space
}

var _ Store = (*Pebble)(nil)

// OpenPebble opens the Pebble store in dir, creating it when it does not
// exist.
func OpenPebble(dir string, opts PebbleOptions) (*Pebble, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	po := &pebble.Options{
		CacheSize:                   opts.CacheSize,
		MemTableSize:                opts.MemTableSize,
		MemTableStopWritesThreshold: 4,
		// Writes stall only when L0 is far behind: bursts of sends are
		// absorbed, and compactions catch up while receivers drain.
		L0CompactionThreshold: 4,
		L0StopWritesThreshold: 24,
		// Use both cores for compactions when there is a backlog.
		CompactionConcurrencyRange: func() (int, int) { return 1, 2 },
		FormatMajorVersion:         pebble.FormatNewest,
		Logger:                     pebbleLogger{logger},
		FS:                         opts.fs,
		EventListener: &pebble.EventListener{
			// A single delete that met two Sets of its key (see
			// singleDeletes): the older Set may come back.
			PossibleAPIMisuse: func(info pebble.PossibleAPIMisuseInfo) {
				logger.Error("pebble: "+info.String(), "component", "pebble")
				if opts.misuse != nil {
					opts.misuse(info)
				}
			},
		},
	}
	po.Experimental.ValueSeparationPolicy = bodiesApart(opts.blobRewriteAge)
	// Blocks of 32 KiB (CockroachDB's size; Pebble's default is 4 KiB): a
	// receive of a backlog reads its bodies from blob files in key order,
	// and a block holds about 30 messages of 1 KiB instead of 3, so that
	// it reads and caches a tenth as many blocks (BENCHMARKS.md, session
	// 34).
	for i := range po.Levels {
		po.Levels[i].BlockSize = blockSize
	}
	if po.CacheSize <= 0 {
		po.CacheSize = DefaultPebbleCacheSize
	}
	if po.MemTableSize == 0 {
		po.MemTableSize = DefaultPebbleMemTableSize
	}
	db, err := pebble.Open(dir, po)
	if err != nil {
		return nil, pebbleError("open the store in "+dir, err)
	}
	cacheSize := opts.BodyCacheSize
	if cacheSize == 0 {
		cacheSize = DefaultPebbleBodyCacheSize
	}
	s := &Pebble{db: db, sync: !opts.NoSync, dir: dir, obs: opts.Observer, cache: newBodyCache(cacheSize)}
	if err := s.checkFormat(); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// bodiesApart returns the store's value separation: a flush writes each
// value of at least blobMinimumSize bytes (a message's record, mostly its
// body) to a blob file and only a reference to it into the sstable, so that
// compactions move keys and references, not bodies: with a backlog of
// 100,000 to 200,000 messages of 1 KiB, the listener spent 20-31% less CPU
// per message sending them and up to 20% less receiving them
// (BENCHMARKS.md, session 34). A queue deletes its messages in about the
// order it wrote them, so blob files mostly die whole. One that keeps a few
// long-lived messages (dead letters, deferred ones) is rewritten with only
// them once half of what blob files hold is garbage and the file is
// rewriteAge old (0: blobRewriteAge), at Pebble's next compaction: blob
// files stay within about twice what is live, and a backlog drained
// within blobRewriteAge is never rewritten.
func bodiesApart(rewriteAge time.Duration) func() pebble.ValueSeparationPolicy {
	if rewriteAge == 0 {
		rewriteAge = blobRewriteAge
	}
	return func() pebble.ValueSeparationPolicy {
		return pebble.ValueSeparationPolicy{
			Enabled:               true,
			MinimumSize:           blobMinimumSize,
			MaxBlobReferenceDepth: 10,
			RewriteMinimumAge:     rewriteAge,
			TargetGarbageRatio:    0.5,
		}
	}
}

// blobRewriteAge is how old a blob file must be before bodiesApart lets
// Pebble rewrite it to drop its garbage.
const blobRewriteAge = 5 * time.Minute

// blockSize is the size of the store's sstable and blob file blocks.
const blockSize = 32 << 10

// blobMinimumSize is the smallest value that bodiesApart separates: below
// it, the reference and the second read cost more than moving the value.
const blobMinimumSize = 256

// checkFormat records the key layout version in a new store and refuses a
// store written with another layout.
func (s *Pebble) checkFormat() error {
	v, closer, err := s.db.Get(formatKey)
	if errors.Is(err, pebble.ErrNotFound) {
		iter, err := s.db.NewIter(nil)
		if err != nil {
			return pebbleError("check the store format", err)
		}
		empty := !iter.First()
		if err := errors.Join(iter.Error(), iter.Close()); err != nil {
			return pebbleError("check the store format", err)
		}
		if !empty {
			return &broker.Error{Code: broker.CodeInvalid, Message: fmt.Sprintf("%s holds a Pebble database that is not a peeklock store", s.dir)}
		}
		if err := s.db.Set(formatKey, binary.AppendUvarint(nil, layoutVersion), pebble.Sync); err != nil {
			return pebbleError("write the store format", err)
		}
		return nil
	}
	if err != nil {
		return pebbleError("read the store format", err)
	}
	defer closer.Close()
	if got, n := binary.Uvarint(v); n != len(v) || got != layoutVersion {
		return &broker.Error{Code: broker.CodeInvalid, Message: fmt.Sprintf("store in %s has layout version %x, this build reads version %d", s.dir, v, layoutVersion)}
	}
	return nil
}

// Durable reports true.
func (s *Pebble) Durable() bool { return true }

// Close flushes the memtables, so that the next open replays no log, and
// closes the database. Batches applied before Close are synced by it; a
// second Close does nothing.
func (s *Pebble) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.cache = nil // its messages are garbage now
	err := s.db.Flush()
	if cerr := s.db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return pebbleError("close the store", err)
	}
	return nil
}

// lock takes closeMu for reading and fails when the store is closed.
func (s *Pebble) lock() error {
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return &broker.Error{Code: broker.CodeClosed, Message: "the store is closed"}
	}
	return nil
}

func (s *Pebble) unlock() { s.closeMu.RUnlock() }

// Get returns the message at loc with State and DeliveryCount from its meta.
func (s *Pebble) Get(loc Loc) (*broker.Message, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	bk := makeMessageKey(spaceBody, loc)
	v, closer, err := s.db.Get(bk[:])
	if err != nil {
		return nil, s.getError(loc, err)
	}
	msg, err := decodeMessage(v)
	closer.Close()
	if err != nil {
		return nil, err
	}
	mk := makeMessageKey(spaceMeta, loc)
	v, closer, err = s.db.Get(mk[:])
	if err != nil {
		return nil, s.getError(loc, err)
	}
	meta, err := decodeMeta(v)
	closer.Close()
	if err != nil {
		return nil, err
	}
	msg.State, msg.DeliveryCount = meta.State, meta.DeliveryCount
	return msg, nil
}

func (s *Pebble) getError(loc Loc, err error) error {
	if errors.Is(err, pebble.ErrNotFound) {
		return broker.Errorf(broker.CodeMessageNotFound, "no stored message with sequence number %d", loc.Seq)
	}
	return pebbleError(fmt.Sprintf("read message %d", loc.Seq), err)
}

// Load hands l the entities, then the sequences, then the session states,
// then the duplicate-detection records, then the metas, each in key order
// (see Loader). It reads no message bodies. An error
// of l ends Load and is returned unchanged. l must not call Close.
func (s *Pebble) Load(l Loader) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.unlock()
	if err := s.scan(spaceEntity, func(k, v []byte) error {
		rec, err := decodeEntity(v)
		if err != nil {
			return err
		}
		if id, ok := parseEntityKey(k); !ok || id != rec.ID {
			return corrupt("entity key %x holds entity %d", k, rec.ID)
		}
		return l.Entity(rec)
	}); err != nil {
		return err
	}
	if err := s.scan(spaceSequence, func(k, v []byte) error {
		id, ok := parseEntityKey(k)
		if !ok {
			return corrupt("bad sequence key %x", k)
		}
		last, err := decodeSequence(v)
		if err != nil {
			return err
		}
		return l.Sequence(id, last)
	}); err != nil {
		return err
	}
	if err := s.scan(spaceState, func(k, v []byte) error {
		id, session, ok := parseStateKey(k)
		if !ok {
			return corrupt("bad session state key %x", k)
		}
		state, updated, err := decodeSessionState(v)
		if err != nil {
			return err
		}
		return l.SessionState(id, session, state, updated)
	}); err != nil {
		return err
	}
	if err := s.scan(spaceDuplicate, func(k, v []byte) error {
		r, ok := parseDuplicateKey(k)
		if !ok {
			return corrupt("bad duplicate-detection key %x", k)
		}
		if err := decodeDuplicate(v); err != nil {
			return err
		}
		return l.Duplicate(r)
	}); err != nil {
		return err
	}
	// The highest sequence number of each entity's metas, for the cache
	// (see singleDeletes).
	seqs := make(map[uint32]int64)
	if err := s.scan(spaceMeta, func(k, v []byte) error {
		loc, ok := parseMessageKey(k)
		if !ok {
			return corrupt("bad meta key %x", k)
		}
		meta, err := decodeMeta(v)
		if err != nil {
			return err
		}
		if last, ok := seqs[loc.Entity]; !ok || loc.Seq > last {
			seqs[loc.Entity] = loc.Seq
		}
		return l.Message(loc, meta)
	}); err != nil {
		return err
	}
	if s.cache != nil {
		s.cache.loadedSeqs(seqs)
	}
	return nil
}

// History reads the stored events of a message's history in index order.
func (s *Pebble) History(k HistoryKey) (uint16, []HistoryEvent, error) {
	if err := s.lock(); err != nil {
		return 0, nil, err
	}
	defer s.unlock()
	lo, hi := makeHistoryKey(k, 0), makeHistoryKey(k, 0xffff)
	iter, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo[:], UpperBound: hi[:]})
	if err != nil {
		return 0, nil, pebbleError("read a history", err)
	}
	defer iter.Close()
	var first uint16
	var out []HistoryEvent
	hidden := false
	for ok := iter.First(); ok; ok = iter.Next() {
		key := iter.Key()
		if len(key) != historyKeyLen {
			return 0, nil, corrupt("bad history key %x", key)
		}
		v, err := iter.ValueAndErr()
		if err != nil {
			return 0, nil, pebbleError("read a history", err)
		}
		if bytes.Equal(v, hiddenFirstEvent) {
			hidden = true
			continue
		}
		ev, err := decodeHistoryEvent(v, s.actorName)
		if err != nil {
			return 0, nil, err
		}
		if len(out) == 0 {
			first = binary.BigEndian.Uint16(key[13:])
		}
		out = append(out, ev)
	}
	if hidden || len(out) > 0 && first != 1 {
		return first, out, nil
	}
	ev, err := s.firstEvent(k)
	if err != nil || ev == nil {
		return first, out, err
	}
	return 0, append([]HistoryEvent{*ev}, out...), nil
}

// hiddenFirstEvent is the value of the history record of index 0 that hides
// the first event kept in the message's record (see HideFirstHistory): no
// event record is a single 0 byte (they begin with codecVersion).
var hiddenFirstEvent = []byte{0}

// firstEvent returns the first history event kept in the record of message
// (k.Entity, k.Seq), in whichever sub-queue it is, or nil.
func (s *Pebble) firstEvent(k HistoryKey) (*HistoryEvent, error) {
	for _, sub := range subQueues {
		loc := Loc{Entity: k.Entity, Sub: sub, Seq: k.Seq}
		bk := makeMessageKey(spaceBody, loc)
		v, closer, err := s.db.Get(bk[:])
		if errors.Is(err, pebble.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, s.getError(loc, err)
		}
		ev, err := decodeMessageHistory(v, s.actorName)
		closer.Close()
		return ev, err
	}
	return nil, nil
}

// scan calls fn for every key of a key space, in key order. The slices are
// valid only during the call.
func (s *Pebble) scan(space byte, fn func(k, v []byte) error) error {
	lo, hi := spaceSpan(space)
	iter, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return pebbleError("scan the store", err)
	}
	for ok := iter.First(); ok; ok = iter.Next() {
		v, err := iter.ValueAndErr()
		if err != nil {
			err = pebbleError("scan the store", err)
		} else {
			err = fn(iter.Key(), v)
		}
		if err != nil {
			_ = iter.Close()
			return err
		}
	}
	if err := errors.Join(iter.Error(), iter.Close()); err != nil {
		return pebbleError("scan the store", err)
	}
	return nil
}

// Apply builds one Pebble batch from b and commits it. With syncing on (the
// default) the commit does not wait for the disk: the returned Pending's
// Wait does. Nothing is applied when an op cannot be encoded (an
// application property of an unknown type: CodeInvalid).
func (s *Pebble) Apply(b *Batch) (Pending, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	if b.Len() == 0 {
		return Done{}, nil
	}
	if s.cache == nil {
		pb, err := s.build(b, nil)
		if err != nil {
			return nil, err
		}
		return s.commit(pb)
	}
	// The cache learns the batch's changes in the order Pebble makes them:
	// Applies that touch one entity's messages build and commit one at a
	// time.
	stripes := stripeSet(b)
	s.cache.lockStripes(stripes)
	defer s.cache.unlockStripes(stripes)
	planp := s.getPlan()
	defer s.plans.Put(planp)
	plan := s.cache.planDeletes(b, *planp)
	*planp = plan
	pb, err := s.build(b, plan)
	if err != nil {
		return nil, err
	}
	p, err := s.commit(pb)
	if err == nil {
		s.cache.after(b, plan)
	}
	return p, err
}

// getPlan returns scratch space for planDeletes.
func (s *Pebble) getPlan() *[]uint8 {
	if p, ok := s.plans.Get().(*[]uint8); ok {
		return p
	}
	return new([]uint8)
}

// commit commits pb: with syncing on, without waiting for the disk (the
// returned Pending's Wait does).
func (s *Pebble) commit(pb *pebble.Batch) (Pending, error) {
	if !s.sync {
		err := pb.Commit(pebble.NoSync)
		_ = pb.Close()
		if err != nil {
			return nil, pebbleError("commit a batch", err)
		}
		return Done{}, nil
	}
	var start time.Time
	if s.obs != nil {
		start = time.Now()
	}
	if err := s.db.ApplyNoSyncWait(pb, pebble.Sync); err != nil {
		_ = pb.Close()
		return nil, pebbleError("commit a batch", err)
	}
	return &pebblePending{b: pb, obs: s.obs, start: start}, nil
}

// maxBatchBytes bounds the encoded size of one batch, far below Pebble's
// own limit of 4 GiB (which it enforces with a panic).
const maxBatchBytes = 1 << 30

// build returns a Pebble batch of b's ops: the message bodies first, then
// the other records (see bodiesFirst); plan (nil: none) says which deletes
// are single deletes (see singleDeletes).
func (s *Pebble) build(b *Batch, plan []uint8) (*pebble.Batch, error) {
	pb := s.db.NewBatchWithSize(batchSizeHint(b))
	if err := s.buildInto(pb, b, plan); err != nil {
		_ = pb.Close()
		return nil, err
	}
	if s.obs != nil {
		s.obs.Batch(len(b.Ops), pb.Len())
	}
	return pb, nil
}

// batchSizeHint guesses the encoded size of b, a little over, so that a
// Pebble batch taken from its pool with less room grows once (a send of 64
// messages of 1 KiB would otherwise grow it seven times from its first
// kilobyte, copying what it holds each time).
func batchSizeHint(b *Batch) int {
	n := 64
	for i := range b.Ops {
		n += 64
		if m := b.Ops[i].Message; m != nil {
			n += len(m.Body) + 192
		}
	}
	return n + 64*len(b.Hist)
}

// buildInto adds b's ops to pb.
func (s *Pebble) buildInto(pb *pebble.Batch, b *Batch, plan []uint8) error {
	bufp := s.getBuf()
	defer s.bufs.Put(bufp)
	buf := *bufp
	defer func() { *bufp = buf[:0] }()
	var refs actorRefs

	split := bodiesFirst(b)
	if split {
		for i := range b.Ops {
			var err error
			if buf, err = buildBody(pb, &b.Ops[i], planOf(plan, i), buf, &refs, len(b.Ops)); err != nil {
				return err
			}
		}
	}
	for i := range b.Ops {
		op := &b.Ops[i]
		var err error
		switch op.Kind {
		case OpPutEntity:
			buf, err = appendEntity(buf[:0], op.Entity)
			if err != nil {
				return err
			}
			k := makeEntityKey(spaceEntity, op.Entity.ID)
			err = pb.Set(k[:], buf, nil)
		case OpDeleteEntity:
			id := op.Loc.Entity
			for _, space := range [...]byte{spaceBody, spaceMeta, spaceState, spaceDuplicate, spaceHistory} {
				lo, hi := entitySpan(space, id)
				if err = pb.DeleteRange(lo, hi, nil); err != nil {
					break
				}
			}
			ek, sk := makeEntityKey(spaceEntity, id), makeEntityKey(spaceSequence, id)
			err = errors.Join(err, pb.Delete(ek[:], nil), pb.Delete(sk[:], nil))
		case OpSetSequence:
			buf = appendSequence(buf[:0], op.Loc.Seq)
			k := makeEntityKey(spaceSequence, op.Loc.Entity)
			err = pb.Set(k[:], buf, nil)
		case OpPutMessage:
			if !split {
				if buf, err = buildBody(pb, op, planOf(plan, i), buf, &refs, len(b.Ops)); err != nil {
					return err
				}
			}
			mk := makeMessageKey(spaceMeta, op.Loc)
			err = pb.Set(mk[:], appendMeta(buf[:0], &op.Meta), nil)
		case OpPutMeta:
			mk := makeMessageKey(spaceMeta, op.Loc)
			err = pb.Set(mk[:], appendMeta(buf[:0], &op.Meta), nil)
		case OpDeleteMessage:
			if !split {
				if buf, err = buildBody(pb, op, planOf(plan, i), buf, &refs, len(b.Ops)); err != nil {
					return err
				}
			}
			mk := makeMessageKey(spaceMeta, op.Loc)
			if planOf(plan, i)&planDelMeta != 0 {
				err = pb.SingleDelete(mk[:], nil)
			} else {
				err = pb.Delete(mk[:], nil)
			}
		case OpSetSessionState:
			if op.State == nil {
				return broker.Errorf(broker.CodeInvalid, "state of session %s set to nil; delete it instead", strconvQuote(op.ID))
			}
			// The key goes after the value in buf: Set copies both.
			buf = appendSessionState(buf[:0], op.State, op.Updated)
			if pb.Len()+len(buf) > maxBatchBytes {
				return broker.Errorf(broker.CodeInvalid, "batch of %d ops is larger than %d bytes", len(b.Ops), maxBatchBytes)
			}
			n := len(buf)
			buf = makeStateKey(buf, op.Loc.Entity, op.ID)
			err = pb.Set(buf[n:], buf[:n], nil)
		case OpDeleteSessionState:
			buf = makeStateKey(buf[:0], op.Loc.Entity, op.ID)
			err = pb.Delete(buf, nil)
		case OpPutDuplicate:
			buf = append(buf[:0], codecVersion)
			buf = makeDuplicateKey(buf, DuplicateRecord{Entity: op.Loc.Entity, ID: op.ID, End: op.End})
			err = pb.Set(buf[1:], buf[:1], nil)
		case OpDeleteDuplicate:
			buf = makeDuplicateKey(buf[:0], DuplicateRecord{Entity: op.Loc.Entity, ID: op.ID, End: op.End})
			err = pb.Delete(buf, nil)
		default:
			return broker.Errorf(broker.CodeInvalid, "unknown store op kind %d", op.Kind)
		}
		if err != nil {
			return pebbleError("build a batch", err)
		}
	}
	for i := range b.Hist {
		if err := buildHistory(pb, &b.Hist[i], buf, &refs); err != nil {
			return pebbleError("build a batch", err)
		}
	}
	// The actors the batch's events name go with them, so that no event
	// on disk names one that is not.
	for i, h := range refs.hashes {
		k := makeActorKey(h)
		buf = append(append(buf[:0], codecVersion), refs.names[i]...)
		if err := pb.Set(k[:], buf, nil); err != nil {
			return pebbleError("build a batch", err)
		}
	}
	return nil
}

// bodiesFirst says whether build writes the body records of b's message
// puts and deletes before its other records. Pebble inserts a batch's
// records into its memtable (a skiplist) one by one, each starting from
// where the previous one went: a key right after the previous one costs a
// comparison or two, any other key a search from the top of the list. A
// send's records alternate between a body and a meta, far apart; written
// as all the bodies, then all the metas, consecutive records are
// neighbours. Records of different keys commute within a batch, and each
// key keeps the order of its ops, so the batch means the same; a range
// deletion (a deleted entity) does not commute with the keys it covers,
// so a batch that has one keeps its order.
func bodiesFirst(b *Batch) bool {
	for i := range b.Ops {
		if b.Ops[i].Kind == OpDeleteEntity {
			return false
		}
	}
	return true
}

// planOf returns plan[i], or 0 without a plan.
func planOf(plan []uint8, i int) uint8 {
	if plan == nil {
		return 0
	}
	return plan[i]
}

// buildBody adds the body record of a message put or delete to pb (other
// ops add none); plan is the op's plan bits; buf is scratch space, returned
// grown.
func buildBody(pb *pebble.Batch, op *Op, plan uint8, buf []byte, refs *actorRefs, ops int) ([]byte, error) {
	var err error
	switch op.Kind {
	case OpPutMessage:
		if op.Message == nil {
			return buf, broker.Errorf(broker.CodeInvalid, "put of message %d without a message", op.Loc.Seq)
		}
		buf, err = appendMessageRecord(buf[:0], op.Message, op.First, refs)
		if err != nil {
			return buf, err
		}
		if pb.Len()+len(buf) > maxBatchBytes {
			return buf, broker.Errorf(broker.CodeInvalid, "batch of %d ops is larger than %d bytes", ops, maxBatchBytes)
		}
		bk := makeMessageKey(spaceBody, op.Loc)
		err = pb.Set(bk[:], buf, nil)
	case OpDeleteMessage:
		bk := makeMessageKey(spaceBody, op.Loc)
		if plan&planDelBody != 0 {
			err = pb.SingleDelete(bk[:], nil)
		} else {
			err = pb.Delete(bk[:], nil)
		}
	default:
		return buf, nil
	}
	if err != nil {
		return buf, pebbleError("build a batch", err)
	}
	return buf, nil
}

// actorName reads the actor a stored history event names by its hash (see
// actorRefs).
func (s *Pebble) actorName(hash uint64) (string, error) {
	k := makeActorKey(hash)
	v, closer, err := s.db.Get(k[:])
	if errors.Is(err, pebble.ErrNotFound) {
		return "", corrupt("history event names actor %016x, which the store does not keep", hash)
	}
	if err != nil {
		return "", pebbleError("read an actor", err)
	}
	defer closer.Close()
	if len(v) == 0 || v[0] != codecVersion {
		return "", corrupt("actor %016x has a bad record", hash)
	}
	return string(v[1:]), nil
}

// buildHistory adds a history change to pb; buf is scratch space; refs
// collects the actors of its events (see actorRefs).
func buildHistory(pb *pebble.Batch, op *HistoryOp, buf []byte, refs *actorRefs) error {
	if op.Hide {
		k := makeHistoryKey(op.Key, 0)
		return pb.Set(k[:], hiddenFirstEvent, nil)
	}
	if op.Event != nil {
		k := makeHistoryKey(op.Key, op.Index)
		return pb.Set(k[:], appendHistoryEvent(buf[:0], op.Event, refs), nil)
	}
	for i := range int(op.Count) {
		k := makeHistoryKey(op.Key, op.Index+uint16(i))
		if err := pb.Delete(k[:], nil); err != nil {
			return err
		}
	}
	return nil
}

func (s *Pebble) getBuf() *[]byte {
	if p, ok := s.bufs.Get().(*[]byte); ok {
		return p
	}
	b := make([]byte, 0, 4096)
	return &b
}

// pebblePending waits for the log sync of one committed batch.
type pebblePending struct {
	once  sync.Once
	b     *pebble.Batch
	err   error
	obs   Observer  // nil: none
	start time.Time // when the batch was committed, for obs
}

// Wait waits until the batch is synced to disk. It may be called more than
// once and from several goroutines.
func (p *pebblePending) Wait() error {
	p.once.Do(func() {
		if err := p.b.SyncWait(); err != nil {
			p.err = pebbleError("sync the write-ahead log", err)
		} else if p.obs != nil {
			p.obs.Synced(time.Since(p.start))
		}
		_ = p.b.Close()
		p.b = nil
	})
	return p.err
}

func appendSequence(dst []byte, last int64) []byte {
	dst = append(dst, codecVersion)
	return binary.AppendVarint(dst, last)
}

// appendSessionState encodes a session state: stateVersion, the time it
// was set (varint unix nanoseconds, 0 when not known), then the state's
// bytes.
func appendSessionState(dst, state []byte, updated int64) []byte {
	dst = append(dst, stateVersion)
	dst = binary.AppendVarint(dst, updated)
	return append(dst, state...)
}

// decodeSessionState returns a copy of the state in b (empty, not nil, for
// an empty state) and when it was set. A state written before the time was
// (codecVersion, then the bytes) reads with the time 0.
func decodeSessionState(b []byte) (state []byte, updated int64, err error) {
	d := decoder{b: b, what: "session state"}
	switch v := d.byte(); {
	case d.err != nil:
	case v == codecVersion:
	case v == stateVersion:
		updated = d.varint()
	default:
		d.fail("unknown session state version %d", v)
	}
	if d.err != nil {
		return nil, 0, d.err
	}
	return append([]byte{}, d.b...), updated, nil
}

// decodeDuplicate checks the value of a duplicate-detection record: the
// codec version alone.
func decodeDuplicate(b []byte) error {
	d := decoder{b: b, what: "duplicate-detection record"}
	d.version()
	return d.finish()
}

func decodeSequence(b []byte) (int64, error) {
	d := decoder{b: b, what: "sequence"}
	d.version()
	v := d.varint()
	return v, d.finish()
}

// corrupt returns an ErrCorrupt error about a stored key.
func corrupt(format string, args ...any) error {
	return &broker.Error{Code: broker.CodeUnknown, Message: "corrupt store: " + fmt.Sprintf(format, args...), Err: ErrCorrupt}
}

// pebbleError wraps an error from Pebble.
func pebbleError(doing string, err error) error {
	var be *broker.Error
	if errors.As(err, &be) {
		return err
	}
	return &broker.Error{Code: broker.CodeUnknown, Message: "store: " + doing + ": " + err.Error(), Err: err}
}

// pebbleLogger passes Pebble's log lines to a slog.Logger.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

// Fatalf logs and exits: see PebbleOptions.Logger.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble", "fatal", true)
	exit(1)
}

// exit ends the process after a fatal Pebble error.
var exit = os.Exit
