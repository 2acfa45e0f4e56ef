package sshserver

import (
	"log/slog"

	"github.com/peeklock/peeklock/model"
)

// remoteExport is the export policy (x) of a session: small exports go to
// the user's clipboard through OSC 52; larger ones become files in the
// configured directory for operators only, never for read-only keys (which
// must not fill the server's disk); each export is audited.
func (s *Server) remoteExport(role Role, sc *sessionClient) *model.RemoteExport {
	re := &model.RemoteExport{
		ClipboardMax: s.cfg.ClipboardMaxBytes,
		FileMax:      s.cfg.ExportMaxBytes,
		Audit:        sc.auditExport,
	}
	switch {
	case role != RoleOperator:
		re.NoFiles = "a read-only key exports to the clipboard only; select fewer messages"
	case s.cfg.ExportDir == "":
		re.NoFiles = "the server has no export directory (export_dir in the [ssh] section, or --ssh-export-dir); select fewer messages"
	default:
		re.Dir = s.cfg.ExportDir
	}
	return re
}

// auditExport writes the audit line of an export: where it went (the
// clipboard, a file's path, or nowhere when refused), how many messages and
// bytes.
func (c *sessionClient) auditExport(entity, to string, messages int, bytes int64, err error) {
	c.record("export", entity, 0, "", err, slog.String("to", to), slog.Int("messages", messages), slog.Int64("bytes", bytes))
}
