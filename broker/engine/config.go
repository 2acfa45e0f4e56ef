package engine

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// CheckEntities validates the entity definitions of a configuration (see
// package broker/emulatorconfig) one by one and that no path is defined
// twice; ApplyConfig checks them so first.
func CheckEntities(ents []broker.Entity) error {
	seen := make(map[string]string, len(ents))
	for _, ent := range ents {
		if _, err := checkEntity(ent); err != nil {
			return configEntityErr(ent, err)
		}
		k := pathKey(ent.Path)
		if prev, dup := seen[k]; dup {
			return newErr(broker.CodeInvalid, ent.Path, "the configuration defines %q twice (also as %q)", ent.Path, prev)
		}
		seen[k] = ent.Path
	}
	return nil
}

// configEntityErr names the configuration entity an error is about.
func configEntityErr(ent broker.Entity, err error) error {
	var be *broker.Error
	if errors.As(err, &be) {
		c := *be
		c.Message = fmt.Sprintf("configuration %s %q: %s", ent.Kind, ent.Path, be.Message)
		return &c
	}
	return err
}

// ApplyConfig makes the engine hold the entities of a configuration (package
// broker/emulatorconfig reads them from a Config.json): it creates
// what is missing and updates what differs (which loses that entity's
// locks); entities not in the configuration are left alone. Everything is
// checked first, against the configuration and the existing entities (kinds,
// RequiresSession, forwarding targets), and nothing is applied when anything
// is wrong.
func (e *Engine) ApplyConfig(ctx context.Context, ents []broker.Entity) error {
	if err := CheckEntities(ents); err != nil {
		return err
	}
	existing, err := e.Entities(ctx)
	if err != nil {
		return err
	}
	have := make(map[string]broker.Entity, len(existing))
	for _, ent := range existing {
		have[pathKey(ent.Path)] = ent
	}
	defined := make(map[string]broker.Entity, len(ents))
	for _, ent := range ents {
		defined[pathKey(ent.Path)] = ent
	}
	exists := func(path string) (broker.Entity, bool) {
		if ent, ok := defined[pathKey(path)]; ok {
			return ent, true
		}
		ent, ok := have[pathKey(path)]
		return ent, ok
	}
	for _, ent := range ents {
		if old, ok := have[pathKey(ent.Path)]; ok {
			if old.Kind != ent.Kind {
				return newErr(broker.CodeInvalid, ent.Path, "configuration %s %q exists already as a %s", ent.Kind, ent.Path, old.Kind)
			}
			if old.Settings.RequiresSession != ent.Settings.RequiresSession {
				return newErr(broker.CodeInvalid, ent.Path, "configuration %s %q: RequiresSession cannot change on an existing entity", ent.Kind, ent.Path)
			}
			if ent.Kind != broker.KindSubscription && old.Settings.EnablePartitioning != ent.Settings.EnablePartitioning {
				return newErr(broker.CodeInvalid, ent.Path, "configuration %s %q: EnablePartitioning cannot change on an existing entity", ent.Kind, ent.Path)
			}
		}
		if ent.Kind == broker.KindSubscription {
			topic, _, _ := broker.SplitSubscriptionPath(ent.Path)
			if t, ok := exists(topic); !ok || t.Kind != broker.KindTopic {
				return newErr(broker.CodeInvalid, ent.Path, "configuration subscription %q: its topic %q is not defined", ent.Path, topic)
			}
		}
		for name, to := range map[string]string{"ForwardTo": ent.Settings.ForwardTo, "ForwardDeadLetteredMessagesTo": ent.Settings.ForwardDeadLetteredMessagesTo} {
			if to == "" {
				continue
			}
			t, ok := exists(to)
			if !ok {
				return newErr(broker.CodeInvalid, ent.Path, "configuration %s %q: %s names %q, which is not defined", ent.Kind, ent.Path, name, to)
			}
			if t.Kind == broker.KindSubscription {
				return newErr(broker.CodeInvalid, ent.Path, "configuration %s %q: %s names subscription %q; forward to a queue or topic", ent.Kind, ent.Path, name, to)
			}
		}
	}
	for _, ent := range ents {
		old, ok := have[pathKey(ent.Path)]
		if !ok {
			if err := e.CreateEntity(ctx, ent); err != nil {
				return err
			}
			continue
		}
		if ent.Kind == broker.KindSubscription && len(ent.Rules) == 0 {
			// A configured subscription without rules has the $Default
			// TrueFilter, as CreateEntity gives it.
			ent.Rules = []broker.Rule{{Name: broker.DefaultRuleName}}
		}
		if !sameDefinition(old, ent, defined) {
			// The configuration format has no UserMetadata nor
			// authorization rules: keep what the admin API set.
			ent.UserMetadata = old.UserMetadata
			ent.AuthorizationRules = old.AuthorizationRules
			// Nor forwarding URIs: keep them for the same targets
			// (Normalize drops them for others).
			ent.Settings.ForwardToURI = old.Settings.ForwardToURI
			ent.Settings.ForwardDeadLetteredMessagesToURI = old.Settings.ForwardDeadLetteredMessagesToURI
			if err := e.UpdateEntity(ctx, ent); err != nil {
				return err
			}
		}
	}
	return nil
}

// sameDefinition reports whether an existing entity already matches a
// configured one (settings after defaults, rules; a subscription's size
// limits come from its topic).
func sameDefinition(old, ent broker.Entity, defined map[string]broker.Entity) bool {
	want := ent.Settings.Normalize()
	if ent.Kind == broker.KindSubscription {
		topic, _, _ := broker.SplitSubscriptionPath(ent.Path)
		if t, ok := defined[pathKey(topic)]; ok {
			ts := t.Settings.Normalize()
			want.MaxSizeInMegabytes, want.MaxMessageSizeInKilobytes = ts.MaxSizeInMegabytes, ts.MaxMessageSizeInKilobytes
		} else {
			want.MaxSizeInMegabytes, want.MaxMessageSizeInKilobytes = old.Settings.MaxSizeInMegabytes, old.Settings.MaxMessageSizeInKilobytes
		}
		want.EnablePartitioning = old.Settings.EnablePartitioning
	}
	// The configuration names forwarding targets, never by URI: a URI the
	// admin API keeps for the same target is no difference.
	if strings.EqualFold(want.ForwardTo, old.Settings.ForwardTo) {
		want.ForwardToURI = old.Settings.ForwardToURI
	}
	if strings.EqualFold(want.ForwardDeadLetteredMessagesTo, old.Settings.ForwardDeadLetteredMessagesTo) {
		want.ForwardDeadLetteredMessagesToURI = old.Settings.ForwardDeadLetteredMessagesToURI
	}
	if old.Settings != want {
		return false
	}
	if len(old.Rules) == 0 && len(ent.Rules) == 0 {
		return true
	}
	return reflect.DeepEqual(withoutTimes(old.Rules), withoutTimes(ent.Rules))
}

// withoutTimes returns a copy of rules without their CreatedAt, which the
// configuration does not set.
func withoutTimes(rules []broker.Rule) []broker.Rule {
	rules = slices.Clone(rules)
	for i := range rules {
		rules[i].CreatedAt = time.Time{}
	}
	return rules
}
