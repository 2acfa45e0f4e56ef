package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"net"

	"github.com/peeklock/peeklock/broker/amqpserver"
	"github.com/peeklock/peeklock/broker/amqpserver/admin"
	"github.com/peeklock/peeklock/broker/amqpserver/entra"
	"github.com/peeklock/peeklock/broker/amqpserver/front"
	"github.com/peeklock/peeklock/broker/devcert"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/model"
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
}

func (f *frontFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.tlsAddr, "tls-addr", "", "also listen on this address (e.g. 127.0.0.1:5671, where SDKs dial amqps:// without a port); "+
		"every port answers AMQP, TLS, HTTPS and AMQP over WebSockets")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate chain (PEM) to serve (default: a local CA's, made in DATA/tls or the config directory)")
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
	cfg := entra.DefaultConfig()
	path := f.configPath
	if path == "" {
		path = model.DefaultConfigPath()
	}
	switch c, err := entra.LoadConfig(path); {
	case err == nil:
		cfg = c
	case f.configPath == "" && errors.Is(err, fs.ErrNotExist):
	default:
		return nil, err
	}
	log.Warn(entra.WarningLine, "roles", len(cfg.Rights), "default_rights", cfg.DefaultRights.String(), "opaque_tokens", cfg.AcceptOpaque)
	return entra.NewValidator(cfg, nil), nil
}

// check reads --tls-cert and --tls-key, before any port opens.
func (f *frontFlags) check() error {
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return usageError{"--tls-cert and --tls-key go together"}
	}
	if f.tlsCert == "" {
		return nil
	}
	cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
	if err != nil {
		return usageError{fmt.Sprintf("--tls-cert %s --tls-key %s: %v", f.tlsCert, f.tlsKey, err)}
	}
	f.cert = &cert
	return nil
}

// tlsConfig returns the listener's TLS configuration: the certificate of
// the flags, or the local CA's leaf (made on first start, renewed when due),
// and logs how to trust that CA.
func (f *frontFlags) tlsConfig(dataDir string, log *slog.Logger) (*tls.Config, error) {
	// Full-sized records from the start: the peers are programs moving
	// messages, not browsers painting a first screen.
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, DynamicRecordSizingDisabled: true}
	if f.cert != nil {
		cfg.Certificates = []tls.Certificate{*f.cert}
		return cfg, nil
	}
	dir, err := devcert.DefaultDir(dataDir)
	if err != nil {
		return nil, err
	}
	ca, err := devcert.Open(devcert.Options{Dir: dir})
	if err != nil {
		return nil, err
	}
	cfg.GetCertificate = ca.GetCertificate
	log.Info(ca.TrustHint(), "ca", ca.CAPath(), "created", ca.Created())
	return cfg, nil
}

// startListeners opens the listener on the addresses given (an empty
// address opens nothing): every port tells AMQP, TLS and HTTP apart, so
// the admin API and AMQP over WebSockets answer on the AMQP port too, and
// AMQP on the admin port. It returns a function that closes them.
func startListeners(eng *engine.Engine, b brokerFlags, log *slog.Logger) (func(), error) {
	if b.amqp == "" && b.admin == "" && b.front.tlsAddr == "" {
		return func() {}, nil
	}
	ev, err := b.front.entraValidator(log)
	if err != nil {
		return nil, err
	}
	o := b.listener.options()
	o.Logger = log
	o.EntraID = ev
	srv, err := amqpserver.New(eng, o)
	if err != nil {
		return nil, err
	}
	tlsCfg, err := b.front.tlsConfig(b.data, log)
	if err != nil {
		return nil, err
	}
	fr, err := front.New(front.Options{
		AMQP:   srv.ServeConn,
		HTTP:   admin.NewHandler(eng, admin.Options{Keys: b.listener.keys.m, KeyRights: b.listener.keys.rights, EntraID: ev, Logger: log}),
		TLS:    tlsCfg,
		Logger: log,
	})
	if err != nil {
		return nil, err
	}
	closeAll := func() {
		_ = fr.Close()
		_ = srv.Close()
	}
	listen := func(what, addr string) (net.Listener, error) {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("%s listener: %w", what, err)
		}
		go fr.Serve(l)
		return l, nil
	}
	if b.amqp != "" {
		l, err := listen("amqp", b.amqp)
		if err != nil {
			return nil, err
		}
		keyName, key := b.listener.firstKey()
		log.Info("AMQP 1.0 listener ready", "addr", l.Addr().String(),
			"connection_string", fmt.Sprintf("Endpoint=sb://%s;SharedAccessKeyName=%s;SharedAccessKey=%s;UseDevelopmentEmulator=true;",
				l.Addr().String(), keyName, key),
			"also", "TLS, HTTPS (admin API) and AMQP over WebSockets on this port")
	}
	if b.admin != "" {
		l, err := listen("admin", b.admin)
		if err != nil {
			return nil, err
		}
		log.Info("admin API ready", "addr", l.Addr().String(), "health", "http://"+l.Addr().String()+"/health")
	}
	if b.front.tlsAddr != "" {
		l, err := listen("tls", b.front.tlsAddr)
		if err != nil {
			return nil, err
		}
		log.Info("TLS listener ready", "addr", l.Addr().String(), "health", "https://"+l.Addr().String()+"/health")
	}
	return closeAll, nil
}
