package model

import (
	"encoding/json"
	"os"
	"path/filepath"

	tea "charm.land/bubbletea/v2"
	"github.com/peeklock/peeklock/internal/userdirs"
)

// lastEntityFile is the file in Options.StateDir that remembers, per
// endpoint, the entity the dashboard showed last: a JSON object from the
// endpoint's description to the entity's path.
const lastEntityFile = "last-entity.json"

// DefaultStateDir returns where the dashboard keeps what it remembers
// between runs: $XDG_STATE_HOME/peeklock, or ~/.local/state/peeklock; ""
// when neither is known; in the environment getenv reads (os.Getenv for
// the process's).
func DefaultStateDir(getenv userdirs.Getenv) string {
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "peeklock")
	}
	if home, err := userdirs.Home(getenv); err == nil {
		return filepath.Join(home, ".local", "state", "peeklock")
	}
	return ""
}

// readLastEntities reads the remembered entities of dir (none when the file
// is missing or unreadable: remembering is a convenience).
func readLastEntities(dir string) map[string]string {
	out := map[string]string{}
	b, err := os.ReadFile(filepath.Join(dir, lastEntityFile))
	if err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}

// lastEntity returns the entity remembered for endpoint in dir, or "".
func lastEntity(dir, endpoint string) string {
	if dir == "" {
		return ""
	}
	return readLastEntities(dir)[endpoint]
}

// rememberEntity returns a command that remembers the entity shown for
// this endpoint (nil when the dashboard remembers nothing). Errors are
// logged, not shown: nothing depends on it.
func (m *Model) rememberEntity() tea.Cmd {
	dir, endpoint, entity := m.opts.StateDir, m.client.Endpoint(), m.entity
	if dir == "" || entity == "" {
		return nil
	}
	return func() tea.Msg {
		if err := saveLastEntity(dir, endpoint, entity); err != nil {
			return rememberedMsg{err: err}
		}
		return nil
	}
}

// rememberedMsg reports a failure to remember the entity shown.
type rememberedMsg struct{ err error }

// saveLastEntity writes entity as the last one of endpoint into dir,
// replacing the file at once (write and rename), so that two dashboards
// never leave half a file.
func saveLastEntity(dir, endpoint, entity string) error {
	all := readLastEntities(dir)
	all[endpoint] = entity
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, lastEntityFile+".*")
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, lastEntityFile)); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
