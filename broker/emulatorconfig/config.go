// Package emulatorconfig reads the Service Bus emulator's Config.json: the
// namespace and the queues, topics, subscriptions and rules it defines, as
// broker.Entity values, with the emulator's defaults for what it leaves
// out. It checks the file's form (JSON with comments, property names, types,
// ranges, SQL expressions); whether the entities can exist together (valid
// names, no duplicates, existing topics and forwarding targets) is the
// engine's to check when it applies them (engine.CheckEntities,
// Engine.ApplyConfig).
package emulatorconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/tailscale/hujson"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/atom"
	"github.com/peeklock/peeklock/broker/engine/sqlfilter"
)

// Config is a parsed Service Bus emulator Config.json: the
// namespace name and the entities it defines, each topic followed by its
// subscriptions.
type Config struct {
	Namespace string
	Entities  []broker.Entity
	// Logging is UserConfig.Logging.Type ("File", "Console", ...); the engine
	// does not use it.
	Logging string
}

// Defaults of the Service Bus emulator for properties a Config.json leaves
// out. They differ from the service's (broker.EntitySettings.Normalize) on
// purpose: a Config.json means what the emulator makes of it.
const (
	DefaultLockDuration     = time.Minute
	DefaultMaxDeliveryCount = 3
	DefaultTimeToLive       = time.Hour
	DefaultDuplicateWindow  = 20 * time.Second
)

// Limits checked in a Config.json, as Service Bus enforces them.
const (
	maxLockDuration    = 5 * time.Minute
	maxDuplicateWindow = 7 * 24 * time.Hour
)

// LoadFile reads and parses a Config.json file.
func LoadFile(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		e := invalid("", "cannot read the configuration file %s: %v", path, err)
		e.Err = err
		return nil, e
	}
	cfg, err := Parse(data)
	if err != nil {
		var be *broker.Error
		if errors.As(err, &be) {
			be.Message = path + ": " + be.Message
		}
		return nil, err
	}
	return cfg, nil
}

// Parse parses the Service Bus emulator's Config.json format:
//
//	{"UserConfig": {"Namespaces": [{"Name": "sbemulatorns",
//	  "Queues": [{"Name": "q", "Properties": {"LockDuration": "PT1M", ...}}],
//	  "Topics": [{"Name": "t", "Properties": {...},
//	    "Subscriptions": [{"Name": "s", "Properties": {...},
//	      "Rules": [{"Name": "r", "Properties": {"FilterType": "Correlation",
//	        "CorrelationFilter": {"CorrelationId": "id1", "Label": "subject1",
//	          "Properties": {"prop1": "value1"}}}}]}]}]}],
//	  "Logging": {"Type": "File"}}}
//
// The file may have comments (// to the end of the line, and /* */) and
// trailing commas, as the emulator's own default Config.json has comments;
// a syntax error names the line and column (in bytes) of the original
// file. Property names match without regard to case; durations are ISO 8601
// (atom.ParseDuration: one too long for a time.Duration, such as .NET's
// TimeSpan.MaxValue, is "never"). Besides the emulator's properties,
// queues and topics accept MaxSizeInMegabytes, MaxMessageSizeInKilobytes
// and EnablePartitioning, and every entity Status, AutoDeleteOnIdle and
// EnableBatchedOperations, named and valued as in the admin API (a
// partitioned entity's MaxSizeInMegabytes is its whole limit here, not one
// partition's). Anything
// malformed or unknown is a *broker.Error with CodeInvalid that names the
// JSON path and the problem, as is a SQL filter or action expression
// (FilterType Sql with SqlFilter.SqlExpression; Action.SqlExpression with
// any filter type) that does not parse.
func Parse(data []byte) (*Config, error) {
	root, err := decodeJSONWithComments(data)
	if err != nil {
		return nil, err
	}
	p := &cfgParser{}
	cfg := p.parse(root)
	if p.err != nil {
		return nil, p.err
	}
	return cfg, nil
}

// utf8BOM is the byte order mark some Windows editors put first in a file.
const utf8BOM = "\ufeff"

// decodeJSONWithComments decodes one JSON value that may have comments and
// trailing commas (HuJSON, github.com/tailscale/hujson), numbers as
// json.Number. hujson.Standardize blanks out the comments and trailing
// commas with spaces, so every byte keeps its offset and an error's line
// and column are those of data.
func decodeJSONWithComments(data []byte) (any, error) {
	data = bytes.Clone(data)
	if bytes.HasPrefix(data, []byte(utf8BOM)) {
		copy(data, "   ") // keeps the offsets
	}
	std, err := hujson.Standardize(data)
	if err != nil {
		return nil, cfgErr("", "is not valid JSON at %s", strings.TrimPrefix(err.Error(), "hujson: "))
	}
	dec := json.NewDecoder(bytes.NewReader(std))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineColumn(std, int(se.Offset))
			return nil, cfgErr("", "is not valid JSON at line %d, column %d: %v", line, col, err)
		}
		return nil, cfgErr("", "is not valid JSON: %v", err)
	}
	if dec.More() {
		return nil, cfgErr("", "has more than one JSON value")
	}
	return root, nil
}

// lineColumn returns the line and column (in bytes, from 1) of offset n of
// b.
func lineColumn(b []byte, n int) (line, column int) {
	n = min(max(n, 0), len(b))
	line = 1 + bytes.Count(b[:n], []byte("\n"))
	column = n - bytes.LastIndexByte(b[:n], '\n')
	return line, column
}

func cfgErr(path, format string, args ...any) *broker.Error {
	where := "the configuration"
	if path != "" {
		where = path
	}
	return invalid("", "%s %s", where, fmt.Sprintf(format, args...))
}

// cfgParser walks the decoded JSON and keeps the first error.
type cfgParser struct {
	err error
}

func (p *cfgParser) fail(path, format string, args ...any) {
	if p.err == nil {
		p.err = cfgErr(path, format, args...)
	}
}

// object is a JSON object whose keys are looked up without regard to case
// and checked off, so that unknown keys can be reported.
type object struct {
	path string
	m    map[string]any
	used map[string]bool
}

func (p *cfgParser) object(path string, v any, optional bool) *object {
	if v == nil && optional {
		return &object{path: path}
	}
	m, ok := v.(map[string]any)
	if !ok {
		p.fail(path, "must be a JSON object, not %s", jsonKind(v))
		return &object{path: path}
	}
	return &object{path: path, m: m, used: make(map[string]bool)}
}

func (o *object) get(name string) (any, string, bool) {
	for k, v := range o.m {
		if strings.EqualFold(k, name) {
			o.used[k] = true
			return v, o.child(k), true
		}
	}
	return nil, o.child(name), false
}

func (o *object) child(name string) string {
	if o.path == "" {
		return name
	}
	return o.path + "." + name
}

// rejectUnknown reports the first key not looked up (keys starting with '$',
// such as "$schema", are allowed).
func (p *cfgParser) rejectUnknown(o *object, allowed string) {
	for k := range o.m {
		if !o.used[k] && !strings.HasPrefix(k, "$") {
			p.fail(o.child(k), "is not a known property here (known: %s)", allowed)
			return
		}
	}
}

func (p *cfgParser) str(o *object, name string, required bool) string {
	v, path, ok := o.get(name)
	if !ok || v == nil {
		if required {
			p.fail(path, "is required")
		}
		return ""
	}
	s, isStr := v.(string)
	if !isStr {
		p.fail(path, "must be a string, not %s", jsonKind(v))
	}
	return s
}

func (p *cfgParser) boolean(o *object, name string, def bool) bool {
	v, path, ok := o.get(name)
	if !ok || v == nil {
		return def
	}
	b, isBool := v.(bool)
	if !isBool {
		p.fail(path, "must be true or false, not %s", jsonKind(v))
	}
	return b
}

func (p *cfgParser) integer(o *object, name string, def, min, max int64) int64 {
	v, path, ok := o.get(name)
	if !ok || v == nil {
		return def
	}
	n, isNum := v.(json.Number)
	if !isNum {
		p.fail(path, "must be a number, not %s", jsonKind(v))
		return def
	}
	i, err := n.Int64()
	if err != nil {
		p.fail(path, "must be a whole number, not %s", n)
		return def
	}
	if i < min || i > max {
		p.fail(path, "is %d; it must be between %d and %d", i, min, max)
	}
	return i
}

func (p *cfgParser) duration(o *object, name string, def, max time.Duration) time.Duration {
	v, path, ok := o.get(name)
	if !ok || v == nil {
		return def
	}
	s, isStr := v.(string)
	if !isStr {
		p.fail(path, "must be an ISO 8601 duration string such as \"PT1M\", not %s", jsonKind(v))
		return def
	}
	d, err := atom.ParseDuration(s)
	if err != nil {
		p.fail(path, "is invalid: %v", err)
		return def
	}
	if d <= 0 {
		p.fail(path, "must be longer than zero")
	}
	if max > 0 && d > max {
		p.fail(path, "is %s; at most %s is allowed", s, atom.FormatDuration(max))
	}
	return d
}

func (p *cfgParser) array(o *object, name string) ([]any, string) {
	v, path, ok := o.get(name)
	if !ok || v == nil {
		return nil, path
	}
	a, isArr := v.([]any)
	if !isArr {
		p.fail(path, "must be a JSON array, not %s", jsonKind(v))
	}
	return a, path
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func (p *cfgParser) parse(root any) *Config {
	cfg := &Config{}
	top := p.object("", root, false)
	uc, ucPath, ok := top.get("UserConfig")
	if !ok {
		p.fail(ucPath, "is required")
		return cfg
	}
	p.rejectUnknown(top, "UserConfig")
	user := p.object(ucPath, uc, false)
	nss, nsPath := p.array(user, "Namespaces")
	if p.err == nil && len(nss) != 1 {
		p.fail(nsPath, "must hold exactly one namespace, not %d", len(nss))
	}
	if logging, lp, ok := user.get("Logging"); ok && logging != nil {
		lo := p.object(lp, logging, false)
		cfg.Logging = p.str(lo, "Type", false)
		p.rejectUnknown(lo, "Type")
	}
	p.rejectUnknown(user, "Namespaces, Logging")
	for i, nsv := range nss {
		ns := p.object(fmt.Sprintf("%s[%d]", nsPath, i), nsv, false)
		cfg.Namespace = p.str(ns, "Name", true)
		queues, qPath := p.array(ns, "Queues")
		for j, qv := range queues {
			cfg.Entities = append(cfg.Entities, p.queue(fmt.Sprintf("%s[%d]", qPath, j), qv))
		}
		topics, tPath := p.array(ns, "Topics")
		for j, tv := range topics {
			cfg.Entities = append(cfg.Entities, p.topic(fmt.Sprintf("%s[%d]", tPath, j), tv)...)
		}
		p.rejectUnknown(ns, "Name, Queues, Topics")
	}
	return cfg
}

const (
	queueProps = "DeadLetteringOnMessageExpiration, DefaultMessageTimeToLive, DuplicateDetectionHistoryTimeWindow, " +
		"ForwardDeadLetteredMessagesTo, ForwardTo, LockDuration, MaxDeliveryCount, RequiresDuplicateDetection, " +
		"RequiresSession, MaxSizeInMegabytes, MaxMessageSizeInKilobytes, " + commonProps + ", EnablePartitioning"
	topicProps = "DefaultMessageTimeToLive, DuplicateDetectionHistoryTimeWindow, RequiresDuplicateDetection, " +
		"MaxSizeInMegabytes, MaxMessageSizeInKilobytes, " + commonProps + ", EnablePartitioning"
	subscriptionProps = "DeadLetteringOnMessageExpiration, DefaultMessageTimeToLive, ForwardDeadLetteredMessagesTo, " +
		"ForwardTo, LockDuration, MaxDeliveryCount, RequiresSession, " + commonProps
	commonProps = "Status, AutoDeleteOnIdle, EnableBatchedOperations"
)

// commonSettings reads the properties that every kind of entity takes:
// Status (Active, Disabled, SendDisabled, ReceiveDisabled; default Active),
// AutoDeleteOnIdle (at least five minutes; default never) and
// EnableBatchedOperations (default true).
func (p *cfgParser) commonSettings(props *object, s *broker.EntitySettings) {
	if name := p.str(props, "Status", false); name != "" {
		st, ok := broker.ParseEntityStatus(name)
		if !ok {
			p.fail(props.child("Status"), "is %q; it must be Active, Disabled, SendDisabled or ReceiveDisabled", name)
		}
		s.Status = st
	}
	if _, path, ok := props.get("AutoDeleteOnIdle"); ok {
		d := p.duration(props, "AutoDeleteOnIdle", 0, 0)
		if d > 0 && d < broker.MinAutoDeleteOnIdle {
			p.fail(path, "is %s; at least %s is allowed", atom.FormatDuration(d), atom.FormatDuration(broker.MinAutoDeleteOnIdle))
		}
		s.AutoDeleteOnIdle = d
	}
	s.DisableBatchedOperations = !p.boolean(props, "EnableBatchedOperations", true)
}

// receiverSettings reads the properties that queues and subscriptions share.
func (p *cfgParser) receiverSettings(props *object) broker.EntitySettings {
	return broker.EntitySettings{
		LockDuration:                     p.duration(props, "LockDuration", DefaultLockDuration, maxLockDuration),
		MaxDeliveryCount:                 int32(p.integer(props, "MaxDeliveryCount", DefaultMaxDeliveryCount, 1, math.MaxInt32)),
		DefaultMessageTimeToLive:         p.duration(props, "DefaultMessageTimeToLive", DefaultTimeToLive, 0),
		DeadLetteringOnMessageExpiration: p.boolean(props, "DeadLetteringOnMessageExpiration", false),
		RequiresSession:                  p.boolean(props, "RequiresSession", false),
		ForwardTo:                        p.str(props, "ForwardTo", false),
		ForwardDeadLetteredMessagesTo:    p.str(props, "ForwardDeadLetteredMessagesTo", false),
	}
}

// senderSettings reads the properties that queues and topics share.
func (p *cfgParser) senderSettings(props *object, s *broker.EntitySettings) {
	s.DefaultMessageTimeToLive = p.duration(props, "DefaultMessageTimeToLive", DefaultTimeToLive, 0)
	s.RequiresDuplicateDetection = p.boolean(props, "RequiresDuplicateDetection", false)
	s.DuplicateDetectionHistoryTimeWindow = p.duration(props, "DuplicateDetectionHistoryTimeWindow", DefaultDuplicateWindow, maxDuplicateWindow)
	s.MaxSizeInMegabytes = p.integer(props, "MaxSizeInMegabytes", broker.DefaultMaxSizeInMegabytes, 1, 1<<20)
	s.MaxMessageSizeInKilobytes = p.integer(props, "MaxMessageSizeInKilobytes", broker.DefaultMaxMessageSizeInKilobytes, 1, 100*1024)
}

func (p *cfgParser) queue(path string, v any) broker.Entity {
	o := p.object(path, v, false)
	name := p.str(o, "Name", true)
	pv, pp, _ := o.get("Properties")
	props := p.object(pp, pv, true)
	s := p.receiverSettings(props)
	p.senderSettings(props, &s)
	p.commonSettings(props, &s)
	s.EnablePartitioning = p.boolean(props, "EnablePartitioning", false)
	p.rejectUnknown(props, queueProps)
	p.rejectUnknown(o, "Name, Properties")
	return broker.Entity{Path: name, Kind: broker.KindQueue, Settings: s}
}

func (p *cfgParser) topic(path string, v any) []broker.Entity {
	o := p.object(path, v, false)
	name := p.str(o, "Name", true)
	pv, pp, _ := o.get("Properties")
	props := p.object(pp, pv, true)
	var s broker.EntitySettings
	p.senderSettings(props, &s)
	p.commonSettings(props, &s)
	s.EnablePartitioning = p.boolean(props, "EnablePartitioning", false)
	p.rejectUnknown(props, topicProps)
	out := []broker.Entity{{Path: name, Kind: broker.KindTopic, Settings: s}}
	subs, sPath := p.array(o, "Subscriptions")
	for i, sv := range subs {
		out = append(out, p.subscription(fmt.Sprintf("%s[%d]", sPath, i), name, sv))
	}
	p.rejectUnknown(o, "Name, Properties, Subscriptions")
	return out
}

func (p *cfgParser) subscription(path, topic string, v any) broker.Entity {
	o := p.object(path, v, false)
	name := p.str(o, "Name", true)
	pv, pp, _ := o.get("Properties")
	props := p.object(pp, pv, true)
	s := p.receiverSettings(props)
	p.commonSettings(props, &s)
	p.rejectUnknown(props, subscriptionProps)
	ent := broker.Entity{Path: broker.SubscriptionPath(topic, name), Kind: broker.KindSubscription, Settings: s}
	rules, rPath := p.array(o, "Rules")
	for i, rv := range rules {
		ent.Rules = append(ent.Rules, p.rule(fmt.Sprintf("%s[%d]", rPath, i), rv))
	}
	p.rejectUnknown(o, "Name, Properties, Rules")
	return ent
}

func (p *cfgParser) rule(path string, v any) broker.Rule {
	o := p.object(path, v, false)
	r := broker.Rule{Name: p.str(o, "Name", true)}
	pv, pp, ok := o.get("Properties")
	if !ok {
		p.fail(pp, "is required")
		return r
	}
	props := p.object(pp, pv, false)
	ft := p.str(props, "FilterType", true)
	switch {
	case strings.EqualFold(ft, "Correlation"):
		cv, cp, ok := props.get("CorrelationFilter")
		if !ok || cv == nil {
			p.fail(cp, "is required when FilterType is Correlation")
			break
		}
		r.Filter = p.correlation(cp, cv)
	case strings.EqualFold(ft, "Sql"):
		sv, sp, ok := props.get("SqlFilter")
		if !ok || sv == nil {
			p.fail(sp, "is required when FilterType is Sql")
			break
		}
		so := p.object(sp, sv, false)
		r.SQL = p.str(so, "SqlExpression", true)
		p.rejectUnknown(so, "SqlExpression")
		if _, err := sqlfilter.ParseFilter(r.SQL); err != nil && r.SQL != "" && p.err == nil {
			p.err = invalid("", "%s.SqlExpression: %s", sp, err.(*broker.Error).Message)
		}
	case ft != "":
		p.fail(pp+".FilterType", "is %q; it must be Correlation or Sql", ft)
	}
	if av, ap, ok := props.get("Action"); ok && av != nil {
		ao := p.object(ap, av, false)
		r.Action = p.str(ao, "SqlExpression", false)
		if _, err := sqlfilter.ParseAction(r.Action); err != nil && r.Action != "" && p.err == nil {
			p.err = invalid("", "%s.SqlExpression: %s", ap, err.(*broker.Error).Message)
		}
		p.rejectUnknown(ao, "SqlExpression")
	}
	p.rejectUnknown(props, "FilterType, CorrelationFilter, SqlFilter, Action")
	p.rejectUnknown(o, "Name, Properties")
	return r
}

func (p *cfgParser) correlation(path string, v any) *broker.CorrelationFilter {
	o := p.object(path, v, false)
	f := &broker.CorrelationFilter{
		ContentType:      p.str(o, "ContentType", false),
		CorrelationID:    p.str(o, "CorrelationId", false),
		Subject:          p.str(o, "Label", false),
		MessageID:        p.str(o, "MessageId", false),
		ReplyTo:          p.str(o, "ReplyTo", false),
		ReplyToSessionID: p.str(o, "ReplyToSessionId", false),
		SessionID:        p.str(o, "SessionId", false),
		To:               p.str(o, "To", false),
	}
	if subj := p.str(o, "Subject", false); subj != "" {
		f.Subject = subj
	}
	if pv, pp, ok := o.get("Properties"); ok && pv != nil {
		po := p.object(pp, pv, false)
		f.Properties = make(map[string]any, len(po.m))
		for k, val := range po.m {
			switch val := val.(type) {
			case string, bool:
				f.Properties[k] = val
			case json.Number:
				if i, err := val.Int64(); err == nil {
					f.Properties[k] = i
				} else if x, err := val.Float64(); err == nil {
					f.Properties[k] = x
				} else {
					p.fail(pp+"."+k, "is not a usable number: %s", val)
				}
			default:
				p.fail(pp+"."+k, "must be a string, number or boolean, not %s", jsonKind(val))
			}
		}
	}
	p.rejectUnknown(o, "ContentType, CorrelationId, Label, Subject, MessageId, ReplyTo, ReplyToSessionId, SessionId, To, Properties")
	return f
}

// invalid is the error of a configuration that cannot be read: CodeInvalid
// with a tracking id, as every error of the broker has one (the command
// line leaves it out: the file is local).
func invalid(entity, format string, args ...any) *broker.Error {
	return &broker.Error{Code: broker.CodeInvalid, Entity: entity, Message: fmt.Sprintf(format, args...), TrackingID: uuid.NewString()}
}
