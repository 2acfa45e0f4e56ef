package engine

import (
	"context"
	"slices"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/atom"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// Limits of entity names, as in Service Bus.
const (
	maxPathLength             = 260
	maxSubscriptionNameLength = 50
	maxForwardHops            = 4
)

// idCounterEntity is the entity id under which the engine stores the highest
// entity id assigned so far (as a sequence record: real entities start at 1),
// so that ids are never reused, even after the newest entity was deleted.
const idCounterEntity = 0

func pathKey(path string) string { return strings.ToLower(path) }

// validName checks a queue or topic path (slash) or a subscription name:
// letters, digits, '.', '-', '_' and (in paths) '/' between segments,
// starting and ending with a letter or digit, with no empty, "." or ".."
// segment (see dotSegment).
func validName(name string, slash bool) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if alnum {
			continue
		}
		if i == 0 || i == len(name)-1 {
			return false
		}
		if c == '.' || c == '-' || c == '_' || slash && c == '/' {
			continue
		}
		return false
	}
	return !dotSegment(name)
}

// dotSegment reports whether a path has an empty, "." or ".." segment:
// such a path would name another entity, or none, once a client or proxy
// resolves it ("a/../b" is "b"), so Service Bus has no such names.
func dotSegment(path string) bool {
	for seg := range strings.SplitSeq(path, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// nameRule says what a name must be, for the error of one that is not.
func nameRule(name string) string {
	if dotSegment(name) {
		return "no segment between slashes may be empty, \".\" or \"..\""
	}
	return "use letters, digits, '.', '-', '_' and '/', starting and ending with a letter or digit"
}

// checkEntity validates a definition; topicOf is the topic path of a
// subscription.
func checkEntity(ent broker.Entity) (topicPath string, err error) {
	p := ent.Path
	if len(p) > maxPathLength {
		return "", newErr(broker.CodeInvalid, p, "the entity path is %d characters long; at most %d are allowed", len(p), maxPathLength)
	}
	topic, sub, isSub := broker.SplitSubscriptionPath(p)
	switch ent.Kind {
	case broker.KindQueue, broker.KindTopic:
		if isSub || strings.Contains(strings.ToLower(p), strings.ToLower(broker.SubscriptionsSegment)) {
			return "", newErr(broker.CodeInvalid, p, "a %s path must not contain %q", ent.Kind, broker.SubscriptionsSegment)
		}
		if !validName(p, true) {
			return "", newErr(broker.CodeInvalid, p, "the %s name %q is not valid: %s", ent.Kind, p, nameRule(p))
		}
		if len(ent.Rules) > 0 {
			return "", newErr(broker.CodeInvalid, p, "only subscriptions have rules")
		}
	case broker.KindSubscription:
		if !isSub {
			return "", newErr(broker.CodeInvalid, p, "a subscription path has the form <topic>%s<subscription>", broker.SubscriptionsSegment)
		}
		if !validName(topic, true) {
			return "", newErr(broker.CodeInvalid, p, "the topic name %q is not valid: %s", topic, nameRule(topic))
		}
		if !validName(sub, false) || len(sub) > maxSubscriptionNameLength {
			return "", newErr(broker.CodeInvalid, p, "the subscription name %q is not valid: at most %d letters, digits, '.', '-' and '_', starting and ending with a letter or digit", sub, maxSubscriptionNameLength)
		}
		if err := checkRules(p, ent.Rules); err != nil {
			return "", err
		}
	default:
		return "", newErr(broker.CodeInvalid, p, "unknown entity kind %d", ent.Kind)
	}
	if n := utf16Len(ent.UserMetadata); n > broker.MaxUserMetadataLength {
		return "", newErr(broker.CodeInvalid, p, "UserMetadata is %d characters long; at most %d are allowed", n, broker.MaxUserMetadataLength)
	}
	if err := checkSettings(p, ent.Settings); err != nil {
		return "", err
	}
	if err := checkAuthorizationRules(p, ent.AuthorizationRules); err != nil {
		return "", err
	}
	return topic, nil
}

// Limits of entity authorization rules, as in Service Bus.
const (
	maxAuthorizationRules = 12
	maxKeyNameLength      = 256
	maxKeyLength          = 256
)

// checkAuthorizationRules validates an entity's authorization rules: each
// has a key name (unique regardless of case), a primary key, rights, and
// names and keys within Service Bus's lengths.
func checkAuthorizationRules(path string, rules []broker.AuthorizationRule) error {
	if len(rules) > maxAuthorizationRules {
		return newErr(broker.CodeInvalid, path, "an entity has at most %d authorization rules, not %d", maxAuthorizationRules, len(rules))
	}
	seen := make(map[string]bool, len(rules))
	for i, r := range rules {
		switch {
		case r.KeyName == "":
			return newErr(broker.CodeInvalid, path, "authorization rule %d has no KeyName", i)
		case len(r.KeyName) > maxKeyNameLength:
			return newErr(broker.CodeInvalid, path, "the KeyName of authorization rule %d is longer than %d characters", i, maxKeyNameLength)
		case seen[strings.ToLower(r.KeyName)]:
			return newErr(broker.CodeInvalid, path, "two authorization rules are named %q", r.KeyName)
		case r.PrimaryKey == "":
			return newErr(broker.CodeInvalid, path, "authorization rule %q has no PrimaryKey", r.KeyName)
		case len(r.PrimaryKey) > maxKeyLength || len(r.SecondaryKey) > maxKeyLength:
			return newErr(broker.CodeInvalid, path, "a key of authorization rule %q is longer than %d characters", r.KeyName, maxKeyLength)
		case r.Rights == 0:
			return newErr(broker.CodeInvalid, path, "authorization rule %q grants no rights; give Manage, Send or Listen", r.KeyName)
		case r.Rights&^broker.AllRights != 0:
			return newErr(broker.CodeInvalid, path, "authorization rule %q has unknown rights %#x", r.KeyName, uint8(r.Rights))
		}
		seen[strings.ToLower(r.KeyName)] = true
	}
	return nil
}

// checkRules validates a subscription's rules (see compileRules).
func checkRules(path string, rules []broker.Rule) error {
	_, err := compileRules(path, rules)
	return err
}

// kindTitle returns the name Service Bus gives a kind in its messages:
// Queue, Topic, Subscription.
func kindTitle(k broker.EntityKind) string {
	s := k.String()
	return strings.ToUpper(s[:1]) + s[1:]
}

// utf16Len returns the length of s in UTF-16 code units, the length of a
// .NET string, which is how Service Bus measures UserMetadata.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// stampRules returns a copy of rules (nil stays nil) with every CreatedAt
// set: a rule keeps the CreatedAt it comes with; one without takes that of
// the rule of the same name (regardless of case) in old, or else now. The
// parameter maps are copied too (see ownParams).
func stampRules(rules, old []broker.Rule, now time.Time) []broker.Rule {
	rules = slices.Clone(rules)
	for i := range rules {
		r := &rules[i]
		r.Parameters, r.ActionParameters = ownParams(r.Parameters), ownParams(r.ActionParameters)
		if !r.CreatedAt.IsZero() {
			continue
		}
		r.CreatedAt = now
		for _, o := range old {
			if strings.EqualFold(o.Name, r.Name) && !o.CreatedAt.IsZero() {
				r.CreatedAt = o.CreatedAt
				break
			}
		}
	}
	return rules
}

// ownParams returns a copy of a rule's parameters that the caller cannot
// change behind the engine's back, with int and uint values as int64 and
// uint64 (the types the store keeps); nil for none.
func ownParams(params map[string]any) map[string]any {
	if len(params) == 0 {
		return nil
	}
	out := make(map[string]any, len(params))
	for k, v := range params {
		switch n := v.(type) {
		case int:
			v = int64(n)
		case uint:
			v = uint64(n)
		}
		out[k] = v
	}
	return out
}

func checkSettings(path string, s broker.EntitySettings) error {
	switch {
	case s.LockDuration < 0:
		return newErr(broker.CodeInvalid, path, "LockDuration %v is negative", s.LockDuration)
	case s.MaxDeliveryCount < 0:
		return newErr(broker.CodeInvalid, path, "MaxDeliveryCount %d is negative", s.MaxDeliveryCount)
	case s.DefaultMessageTimeToLive < 0:
		return newErr(broker.CodeInvalid, path, "DefaultMessageTimeToLive %v is negative", s.DefaultMessageTimeToLive)
	case s.DuplicateDetectionHistoryTimeWindow < 0:
		return newErr(broker.CodeInvalid, path, "DuplicateDetectionHistoryTimeWindow %v is negative", s.DuplicateDetectionHistoryTimeWindow)
	case s.MaxSizeInMegabytes < 0:
		return newErr(broker.CodeInvalid, path, "MaxSizeInMegabytes %d is negative", s.MaxSizeInMegabytes)
	case s.MaxMessageSizeInKilobytes < 0:
		return newErr(broker.CodeInvalid, path, "MaxMessageSizeInKilobytes %d is negative", s.MaxMessageSizeInKilobytes)
	case !s.Status.Valid():
		return newErr(broker.CodeInvalid, path, "unknown entity status %d", s.Status)
	case s.AutoDeleteOnIdle < 0:
		return newErr(broker.CodeInvalid, path, "AutoDeleteOnIdle %v is negative", s.AutoDeleteOnIdle)
	case s.AutoDeleteOnIdle > 0 && s.AutoDeleteOnIdle < broker.MinAutoDeleteOnIdle:
		return newErr(broker.CodeInvalid, path, "AutoDeleteOnIdle %s is shorter than the minimum of %s", atom.FormatDuration(s.AutoDeleteOnIdle), atom.FormatDuration(broker.MinAutoDeleteOnIdle))
	case strings.EqualFold(s.ForwardTo, path):
		return newErr(broker.CodeInvalid, path, "an entity cannot forward to itself")
	case strings.EqualFold(s.ForwardDeadLetteredMessagesTo, path):
		return newErr(broker.CodeInvalid, path, "an entity cannot forward its dead-lettered messages to itself")
	}
	for _, f := range []struct{ name, to string }{{"ForwardTo", s.ForwardTo}, {"ForwardDeadLetteredMessagesTo", s.ForwardDeadLetteredMessagesTo}} {
		if f.to == "" {
			continue
		}
		p, sub := broker.SplitAddress(f.to)
		if sub != broker.SubQueueMain {
			return newErr(broker.CodeInvalid, path, "cannot forward to the %s of %q", sub, p)
		}
		if len(p) > maxPathLength {
			return newErr(broker.CodeInvalid, path, "%s names a path of %d characters; at most %d are allowed", f.name, len(p), maxPathLength)
		}
		if !validName(p, true) {
			return newErr(broker.CodeInvalid, path, "%s %q does not name a queue or topic: %s", f.name, f.to, nameRule(p))
		}
	}
	return nil
}

// CreateEntity creates a queue, a topic, or a subscription (Path
// "topic/Subscriptions/name", the topic must exist). Zero settings take their
// defaults (broker.EntitySettings.Normalize); a subscription takes its size
// limits and partitioning from its topic. A subscription created with nil
// Rules gets the $Default TrueFilter (broker.DefaultRuleName), as in Service
// Bus; one created with empty, non-nil Rules has none and takes no message
// until a rule is added. A rule whose SQL filter or action does not parse is
// refused with CodeInvalid, as is UserMetadata longer than
// broker.MaxUserMetadataLength, and so are settings out of range and
// authorization rules without a name, key or rights. CreatedAt and UpdatedAt become the clock's time, as
// does each rule's CreatedAt unless it has one; AccessedAt is ignored.
func (e *Engine) CreateEntity(ctx context.Context, ent broker.Entity) error {
	if err := e.begin(ctx); err != nil {
		return err
	}
	defer e.leave()
	p, err := e.createEntity(ent)
	if err != nil {
		return err
	}
	if err := p.Wait(); err != nil {
		return storeErr("store the entity", ent.Path, err)
	}
	e.emitEntity(broker.EventEntityChanged, ent.Path, broker.SubQueueMain, "created")
	return nil
}

func (e *Engine) createEntity(ent broker.Entity) (store.Pending, error) {
	topicPath, err := checkEntity(ent)
	if err != nil {
		return nil, err
	}
	now := e.clock.Now().UTC()
	ent.Rules = stampRules(ent.Rules, nil, now)
	ent.CreatedAt, ent.UpdatedAt, ent.AccessedAt = now, now, time.Time{}
	e.mu.Lock()
	defer e.mu.Unlock()
	key := pathKey(ent.Path)
	if old := e.entities[key]; old != nil {
		return nil, newErr(broker.CodeAlreadyExists, ent.Path, "%s", broker.ExistsMessage(broker.EntityRef(e.ns, old.kind, old.path)))
	}
	var topic *entity
	if ent.Kind == broker.KindSubscription {
		topic = e.entities[pathKey(topicPath)]
		if topic == nil || topic.kind != broker.KindTopic {
			return nil, newErr(broker.CodeNotFound, ent.Path, "%s", broker.NotFoundMessage(broker.EntityRef(e.ns, broker.KindTopic, topicPath)))
		}
		ent.Settings = topic.inheritedBy(ent.Settings)
	}
	en := newEntity(e, e.nextID, ent)
	en.topic = topic
	var b store.Batch
	b.PutEntity(store.EntityRecord{ID: en.id, Entity: stored(en.public())})
	b.SetSequence(idCounterEntity, int64(en.id))
	p, err := e.store.Apply(&b)
	if err != nil {
		return nil, storeErr("store the entity", ent.Path, err)
	}
	e.nextID++
	e.entities[key] = en
	if topic != nil {
		topic.subs = append(topic.subs, en)
	}
	return p, nil
}

// stored strips what is not stored from an entity definition: the counts
// and AccessedAt.
func stored(ent broker.Entity) broker.Entity {
	ent.Counts = broker.Counts{}
	ent.AccessedAt = time.Time{}
	return ent
}

// UpdateEntity changes an entity's settings, UserMetadata and
// AuthorizationRules (all three replaced by ent's), and a subscription's
// rules when ent.Rules is not nil (an empty, non-nil slice removes every
// rule: the subscription then takes no message; rules get their
// CreatedAt as in SetRules). Path and Kind select the entity and cannot
// change, nor can RequiresSession or a queue's or topic's
// EnablePartitioning (a subscription keeps its topic's); CreatedAt and
// AccessedAt are ignored, and UpdatedAt becomes the clock's time. Every
// message lock the entity holds is lost, as Service Bus does when settings
// change: settling such a lock fails with broker.ErrLockLost. Session locks
// are kept: a session receiver keeps its session and gets the messages
// whose locks were lost again (the Go SDK's TestSessionReceiver_Detach
// requires a session receiver to carry on after an update). To change only a subscription's
// rules and keep its locks, use SetRules. A topic passes its size limits on
// to its subscriptions (which does not change their UpdatedAt). Receivers
// waiting on the entity (or, for a topic, on its subscriptions) look at the
// new status at once.
func (e *Engine) UpdateEntity(ctx context.Context, ent broker.Entity) error {
	if err := e.begin(ctx); err != nil {
		return err
	}
	defer e.leave()
	if _, err := checkEntity(ent); err != nil {
		return err
	}
	en, sub, err := e.lookup(ent.Path)
	if err != nil {
		return err
	}
	if sub != broker.SubQueueMain {
		return newErr(broker.CodeInvalid, ent.Path, "a %s has no settings of its own", sub)
	}
	var p store.Pending
	var settings broker.EntitySettings
	if err := e.withDue(en, func(now int64) (err error) {
		p, settings, err = en.update(ent, now)
		return err
	}); err != nil {
		return err
	}
	if err := p.Wait(); err != nil {
		return storeErr("store the entity", en.path, err)
	}
	if en.kind == broker.KindTopic {
		for _, s := range e.subscriptions(en) {
			if err := e.inheritLimits(s, settings); err != nil {
				return err
			}
		}
	}
	e.emitEntity(broker.EventEntityChanged, en.path, broker.SubQueueMain, "updated")
	return nil
}

// update is UpdateEntity's work under en's mutex: the new definition
// applied and committed (or en as it was), the locks lost. It returns the
// pending store change and the settings now in force.
func (en *entity) update(ent broker.Entity, now int64) (store.Pending, broker.EntitySettings, error) {
	if en.kind != ent.Kind {
		return nil, broker.EntitySettings{}, newErr(broker.CodeInvalid, en.path, "%q is a %s, not a %s", en.path, en.kind, ent.Kind)
	}
	settings := ent.Settings.Normalize()
	if settings.RequiresSession != en.settings.RequiresSession {
		// Service Bus's words (the Go SDK's admin tests check them).
		return nil, broker.EntitySettings{}, newErr(broker.CodeInvalid, en.path, "The value for the RequiresSession property of an existing %s cannot be changed.", kindTitle(en.kind))
	}
	if en.topic != nil {
		settings.MaxSizeInMegabytes = en.topic.settings.MaxSizeInMegabytes
		settings.MaxMessageSizeInKilobytes = en.topic.settings.MaxMessageSizeInKilobytes
		settings.EnablePartitioning = en.settings.EnablePartitioning
	} else if settings.EnablePartitioning != en.settings.EnablePartitioning {
		return nil, broker.EntitySettings{}, newErr(broker.CodeInvalid, en.path, "Partitioning cannot be changed for %s", kindTitle(en.kind))
	}
	// A change the store refuses leaves the entity as it was.
	oldSettings, oldMetadata, oldRules, oldMatch, oldUpdated, oldAuth := en.settings, en.userMetadata, en.rules, en.match, en.updatedAt, en.authRules
	en.settings = settings
	en.userMetadata = ent.UserMetadata
	en.authRules = slices.Clone(ent.AuthorizationRules)
	at := time.Unix(0, now).UTC()
	if en.kind == broker.KindSubscription && ent.Rules != nil {
		en.rules = stampRules(ent.Rules, en.rules, at)
		en.match = mustCompile(en.path, en.rules)
	}
	en.updatedAt = at
	en.batch.PutEntity(store.EntityRecord{ID: en.id, Entity: stored(en.public())})
	p, err := en.commit()
	if err != nil {
		en.settings, en.userMetadata, en.rules, en.match, en.updatedAt, en.authRules = oldSettings, oldMetadata, oldRules, oldMatch, oldUpdated, oldAuth
		return nil, broker.EntitySettings{}, err
	}
	en.status.Store(uint32(settings.Status))
	en.publishSettings()
	en.use(now)
	en.loseMessageLocks(now)
	en.commitQuiet() // whatever losing the locks wrote (nothing today)
	if settings.Status != oldSettings.Status {
		en.wakeAll()
	}
	return p, settings, nil
}

// inheritedBy returns the settings of a new subscription of the topic t with
// the limits it inherits from t, under t's mutex.
func (t *entity) inheritedBy(s broker.EntitySettings) broker.EntitySettings {
	t.mu.Lock()
	defer t.mu.Unlock()
	s.MaxSizeInMegabytes = t.settings.MaxSizeInMegabytes
	s.MaxMessageSizeInKilobytes = t.settings.MaxMessageSizeInKilobytes
	s.EnablePartitioning = t.settings.EnablePartitioning
	return s
}

// inheritLimits gives a subscription its topic's size limits, and wakes
// its waiting receivers, which look at the topic's status again.
func (e *Engine) inheritLimits(s *entity, topic broker.EntitySettings) error {
	var p store.Pending
	if err := e.withLocked(s, func() (err error) {
		s.wakeAll()
		s.settings.MaxSizeInMegabytes = topic.MaxSizeInMegabytes
		s.settings.MaxMessageSizeInKilobytes = topic.MaxMessageSizeInKilobytes
		s.batch.PutEntity(store.EntityRecord{ID: s.id, Entity: stored(s.public())})
		p, err = s.commit()
		if err == nil {
			s.publishSettings()
		}
		return err
	}); err != nil {
		if broker.CodeOf(err) == broker.CodeNotFound {
			return nil // deleted meanwhile
		}
		return err
	}
	return p.Wait()
}

// wakeAll wakes every receiver waiting on the entity, on any sub-queue or
// session, so that it looks at the entity again. Called with mu held.
func (en *entity) wakeAll() {
	for i := range en.waiters {
		en.waiters[i].wakeAll()
	}
	for _, s := range en.sessions {
		s.waiters.wakeAll()
	}
}

// loseMessageLocks loses every message lock of the entity; session locks
// stay with their owners, who receive the released messages again.
func (en *entity) loseMessageLocks(now int64) {
	var locked []*entry
	for i := range en.q {
		en.q[i].locked.Scan(func(x *entry) bool { locked = append(locked, x); return true })
	}
	for _, x := range locked {
		en.release(x, now, broker.EventLockLost, "the entity was changed", nil, broker.ActorBroker)
	}
}

// DeleteEntity deletes an entity with all its messages; deleting a topic
// deletes its subscriptions. Receivers waiting on it return ErrNotFound.
func (e *Engine) DeleteEntity(ctx context.Context, path string) error {
	if err := e.begin(ctx); err != nil {
		return err
	}
	defer e.leave()
	p, sub := broker.SplitAddress(path)
	if sub != broker.SubQueueMain {
		return newErr(broker.CodeInvalid, p, "a %s cannot be deleted on its own; delete the entity", sub)
	}
	_, err := e.deleteEntity(p, nil, "deleted")
	return err
}

// deleteEntity deletes the entity at path with its subscriptions, and
// reports why in the events. With idle set, it deletes only that entity,
// and only when it is still idle past its AutoDeleteOnIdle (checked under
// the mutexes, so that an operation that came meanwhile keeps it); deleted
// says whether it did.
func (e *Engine) deleteEntity(p string, idle *entity, why string) (deleted bool, err error) {
	gone, pending, err := e.detach(p, idle)
	if gone == nil {
		return false, err
	}
	e.forgetEntities(gone)
	if err != nil {
		return true, storeErr("delete the entity", p, err)
	}
	if err := pending.Wait(); err != nil {
		return true, storeErr("delete the entity", p, err)
	}
	for _, x := range gone {
		e.emitEntity(broker.EventEntityChanged, x.path, broker.SubQueueMain, why)
	}
	return true, nil
}

// detach is deleteEntity's work under Engine.mu: it takes the entity at p
// and its subscriptions out of the maps, marks them deleted and applies
// their deletion to the store. It returns them (nil: nothing deleted, with
// ErrNotFound or, for idle, nil) and the pending store change, or the
// store's error.
func (e *Engine) detach(p string, idle *entity) ([]*entity, store.Pending, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	en := e.entities[pathKey(p)]
	if en == nil {
		return nil, nil, errNotFound(p)
	}
	if idle != nil {
		d := en.lockedIdleDeadline()
		if en != idle || d == 0 || d > e.now() {
			return nil, nil, nil
		}
	}
	gone := append([]*entity{en}, en.subs...)
	for _, x := range gone {
		delete(e.entities, x.key)
	}
	if en.topic != nil {
		en.topic.subs = slices.DeleteFunc(en.topic.subs, func(x *entity) bool { return x == en })
	}
	en.subs = nil
	// Mark them deleted before the store forgets them, so that no operation
	// in flight writes for them afterwards (every store write of an entity
	// happens under its mutex after checking deleted).
	for _, x := range gone {
		x.markDeleted()
	}
	var b store.Batch
	for _, x := range gone {
		b.DeleteEntity(x.id)
	}
	pending, err := e.store.Apply(&b)
	return gone, pending, err
}

// markDeleted marks the entity deleted, drops its pending store changes and
// forwards, and wakes every waiting receiver, under its mutex.
func (en *entity) markDeleted() {
	en.mu.Lock()
	defer en.mu.Unlock()
	en.deleted = true
	en.batch = store.Batch{}
	en.hist.buf, en.hist.held = nil, heldEvents{}
	en.outbox = nil
	for i := range en.waiters {
		en.waiters[i].wakeAll()
	}
	for _, s := range en.sessions {
		s.waiters.wakeAll()
	}
}

// lockedIdleDeadline is idleDeadline under the entity's mutex.
func (en *entity) lockedIdleDeadline() int64 {
	en.mu.Lock()
	defer en.mu.Unlock()
	return en.idleDeadline()
}

// autoDeleteOnIdle returns the entity's AutoDeleteOnIdle, under its mutex.
func (en *entity) autoDeleteOnIdle() time.Duration {
	en.mu.Lock()
	defer en.mu.Unlock()
	return en.settings.AutoDeleteOnIdle
}

// deleteIdle deletes entities that have been idle for their
// AutoDeleteOnIdle (see entity.use), as the sweeper and Tick find them; a
// topic goes with its subscriptions.
func (e *Engine) deleteIdle(list []*entity) {
	for _, en := range list {
		idle := en.autoDeleteOnIdle()
		why := "deleted: idle for " + atom.FormatDuration(idle) + " (AutoDeleteOnIdle)"
		deleted, err := e.deleteEntity(en.path, en, why)
		switch {
		case err != nil && broker.CodeOf(err) != broker.CodeNotFound:
			e.log.Error("deleting an idle entity failed", "entity", en.path, "err", err)
		case deleted:
			e.log.Info("entity deleted after being idle", "entity", en.path, "autoDeleteOnIdle", atom.FormatDuration(idle))
		}
	}
}

// forgetEntities drops deleted entities from the owner registry.
func (e *Engine) forgetEntities(gone []*entity) {
	e.ownersMu.Lock()
	defer e.ownersMu.Unlock()
	for _, set := range e.owners {
		for _, x := range gone {
			delete(set, x)
		}
	}
}

// Entity returns an entity's definition with its current counts. Topics have
// zero counts: their messages live in their subscriptions.
func (e *Engine) Entity(ctx context.Context, path string) (broker.Entity, error) {
	if err := e.begin(ctx); err != nil {
		return broker.Entity{}, err
	}
	defer e.leave()
	en, _, err := e.lookup(path)
	if err != nil {
		return broker.Entity{}, err
	}
	var ent broker.Entity
	err = e.withDue(en, func(int64) error {
		ent = en.public()
		return nil
	})
	return ent, err
}

// EntityShape returns the path (as the entity spells it), kind and
// settings of the entity at path (an address's sub-queue suffix is
// ignored), as last committed, and no counts, rules or metadata. It never
// waits on an entity's mutex or the store: it is for the AMQP listener's
// connection reader, which must not block (see amqpserver's doc.go). It
// reads the entity map under the Engine's read lock, which creation and
// deletion hold only to change the map and queue their store batch.
func (e *Engine) EntityShape(path string) (broker.Entity, error) {
	if e.closed.Load() {
		return broker.Entity{}, errClosed()
	}
	p, _ := broker.SplitAddress(path)
	en := e.entityAt(pathKey(p))
	if en == nil {
		return broker.Entity{}, errNotFound(p)
	}
	return broker.Entity{Path: en.path, Kind: en.kind, Settings: *en.published.Load()}, nil
}

// Entities lists every queue, topic and subscription with its counts, sorted
// by path.
func (e *Engine) Entities(ctx context.Context) ([]broker.Entity, error) {
	if err := e.begin(ctx); err != nil {
		return nil, err
	}
	defer e.leave()
	list := e.entityList()
	out := make([]broker.Entity, 0, len(list))
	for _, en := range list {
		_ = e.withDue(en, func(int64) error { // a deleted entity is left out
			out = append(out, en.public())
			return nil
		})
	}
	slices.SortFunc(out, func(a, b broker.Entity) int { return strings.Compare(pathKey(a.Path), pathKey(b.Path)) })
	return out, nil
}
