package cli

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"

	"github.com/spf13/pflag"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver"
	"github.com/peeklock/peeklock/broker/amqpserver/admin"
	"github.com/peeklock/peeklock/broker/amqpserver/entra"
	"github.com/peeklock/peeklock/broker/devcert"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/metrics"
	"github.com/peeklock/peeklock/internal/config"
	"github.com/peeklock/peeklock/internal/serve"
)

// frontFlags are the flags of the Azure-shaped endpoint: TLS on every port
// and an extra TLS-only address.
type frontFlags struct {
	tlsAddr string
	tlsCert string
	tlsKey  string
	entraID bool
	// configPath is the config file whose [entra_id] section gives roles
	// ("" means the default path, where a missing file is no error).
	configPath string

	cert *tls.Certificate // --tls-cert/--tls-key, read by check
	// env is the command line's environment, where the default config
	// file and the local CA's directory are found.
	env environ
}

func (f *frontFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.tlsAddr, "tls-addr", "", "also listen on this address (e.g. 127.0.0.1:5671, where SDKs dial amqps:// without a port); "+
		"every port answers AMQP, TLS, HTTPS and AMQP over WebSockets")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "the TLS certificate chain (PEM) to serve (default: a local CA's, made in DATA/tls or the config directory)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "private key (PEM) of --tls-cert")
	fs.BoolVar(&f.entraID, "entra-id", false, "accept Microsoft Entra ID tokens WITHOUT checking their signature, for local development; "+
		"roles by object or app id from the [entra_id] section of the config file (default Owner); tokens that are not JWTs get the default role")
}

// entraValidator returns the Entra ID validator of --entra-id (nil without
// it), with the roles of the config file, and logs the warning line.
func (f *frontFlags) entraValidator(log *slog.Logger) (*entra.Validator, error) {
	if !f.entraID {
		return nil, nil
	}
	path := f.configPath
	if path == "" {
		path = config.DefaultPath(f.env.get)
	}
	file, err := config.Load(path)
	if err != nil && (f.configPath != "" || !errors.Is(err, fs.ErrNotExist)) {
		return nil, err
	}
	cfg, err := entra.ConfigFrom(entraSection(file.EntraID))
	if err != nil {
		return nil, &broker.Error{Code: broker.CodeInvalid, Message: path + ": " + localMessage(err), Err: err}
	}
	log.Warn(entra.WarningLine, "roles", len(cfg.Rights), "default_rights", cfg.DefaultRights.String(), "opaque_tokens", cfg.AcceptOpaque)
	return entra.NewValidator(cfg, nil), nil
}

// check reads --tls-cert and --tls-key, before any port opens.
func (f *frontFlags) check() error {
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return usagef("--tls-cert and --tls-key go together")
	}
	if f.tlsCert == "" {
		return nil
	}
	cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
	if err != nil {
		return usagef("--tls-cert %s --tls-key %s: %v", f.tlsCert, f.tlsKey, err)
	}
	f.cert = &cert
	return nil
}

// tlsConfig returns the listener's TLS configuration: the certificate of
// the flags, or the local CA's leaf (made on first start, renewed when due),
// and logs how to trust that CA. caPath is the local CA's file ("" with
// --tls-cert). It writes the CA's files: call it after the ports are bound.
func (f *frontFlags) tlsConfig(dataDir string, log *slog.Logger) (cfg *tls.Config, caPath string, err error) {
	// Full-sized records from the start: the peers are programs moving
	// messages, not browsers painting a first screen.
	cfg = &tls.Config{MinVersion: tls.VersionTLS12, DynamicRecordSizingDisabled: true}
	if f.cert != nil {
		cfg.Certificates = []tls.Certificate{*f.cert}
		return cfg, "", nil
	}
	dir, err := devcert.DefaultDir(dataDir, f.env.get)
	if err != nil {
		return nil, "", err
	}
	ca, err := devcert.Open(devcert.Options{Dir: dir})
	if err != nil {
		return nil, "", err
	}
	cfg.GetCertificate = ca.GetCertificate
	log.Info(trustHint(ca.CAPath()), "ca", ca.CAPath(), "created", ca.Created(), "ports", portsHint)
	return cfg, ca.CAPath(), nil
}

// listenEndpoint is what serves the bound sockets: the AMQP server and the
// Entra ID validator, made before any socket opens so that their options
// are checked first, and the TLS configuration, made once the sockets are
// bound (openTLS): nothing is written before.
type listenEndpoint struct {
	srv   *amqpserver.Server
	entra *entra.Validator
	tls   *tls.Config
	// unrecord removes the records of the local CA for the bound ports.
	unrecord func()
}

// newEndpoint makes the listenEndpoint of the flags, or nil when no address is
// given. ev is the Entra ID validator (b.front.entraValidator, read before
// any port is bound).
func newEndpoint(eng *engine.Engine, b brokerFlags, ev *entra.Validator, log *slog.Logger) (*listenEndpoint, error) {
	if !b.listens() {
		return nil, nil
	}
	o := b.listener.options()
	o.Logger = log
	o.EntraID = ev
	srv, err := amqpserver.New(eng, o)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	return &listenEndpoint{srv: srv, entra: ev, unrecord: func() {}}, nil
}

// openTLS makes the TLS configuration of the bound sockets ls (the local
// CA's files are written now, not before the ports are bound) and records
// the local CA for their ports, so that the other peeklock commands of this
// machine trust it (servedca.go). On error it closes ls and the server.
func (ep *listenEndpoint) openTLS(b brokerFlags, ls *listeners, log *slog.Logger) error {
	if ep == nil {
		return nil
	}
	cfg, caPath, err := b.front.tlsConfig(b.data, log)
	if err != nil {
		ls.close()
		ep.srv.Close()
		return err
	}
	ep.tls = cfg
	ep.unrecord = recordServedCA(b.front.env, caPath, ls.addrs(), func(err error) {
		log.Warn("the other peeklock commands of this machine will not trust the local CA by themselves", "err", err)
	})
	return nil
}

// startListeners serves the bound sockets through the one serve assembly
// (internal/serve) that the tests' fixture runs too: every port tells AMQP,
// TLS and HTTP apart, so the admin API (with /health and /metrics) and AMQP
// over WebSockets answer on the AMQP port too, and AMQP on the admin port.
// It returns a function that closes them, and the channel on which a port
// that stops serving reports why (nil without ports).
func startListeners(eng *engine.Engine, st *metrics.StoreMetrics, b brokerFlags, ls *listeners, ep *listenEndpoint, log *slog.Logger) (stop func(), failed <-chan error) {
	if ep == nil {
		return func() {}, nil
	}
	closeEndpoint := func() { _ = ep.srv.Close(); ep.unrecord() }
	var ports []net.Listener
	for _, l := range []net.Listener{ls.amqp, ls.admin, ls.tls} {
		if l != nil {
			ports = append(ports, l)
		}
	}
	srv, err := serve.Start(serve.Options{
		AMQP: ep.srv.ServeConn,
		HTTP: admin.NewHandler(eng, admin.Options{Keys: b.listener.keys.m, KeyRights: b.listener.keys.rights, EntraID: ep.entra, Logger: log,
			Metrics: metrics.Handler(eng, ep.srv, st)}),
		TLS:    ep.tls,
		Logger: log,
	}, ports...)
	if err != nil { // the options above are always complete
		log.Error("the listener's front cannot start", "err", err)
		return closeEndpoint, nil
	}
	if ls.amqp != nil {
		keyName, key := b.listener.firstKey()
		addr := ls.amqp.Addr().String()
		log.Info("AMQP 1.0 listener ready", "addr", addr,
			"connection_string", fmt.Sprintf("Endpoint=sb://%s;SharedAccessKeyName=%s;SharedAccessKey=%s;UseDevelopmentEmulator=true;",
				addr, keyName, key),
			"also", "TLS, HTTPS (admin API) and AMQP over WebSockets on this port")
	}
	if ls.admin != nil {
		addr := ls.admin.Addr().String()
		log.Info("admin API ready", "addr", addr, "health", "http://"+addr+"/health", "metrics", "http://"+addr+"/metrics")
	}
	if ls.tls != nil {
		log.Info("TLS listener ready", "addr", ls.tls.Addr().String(), "health", "https://"+ls.tls.Addr().String()+"/health")
	}
	return func() {
		_ = srv.Close()
		closeEndpoint()
	}, srv.Errors()
}

// entraSection hands the [entra_id] section of the config file to package
// entra as plain values (nil when the file has none), so that nothing under
// broker/ imports the config file's format.
func entraSection(s *config.EntraID) *entra.Section {
	if s == nil {
		return nil
	}
	return &entra.Section{DefaultRole: s.DefaultRole, AcceptOpaque: s.AcceptOpaque, Roles: s.Roles}
}
