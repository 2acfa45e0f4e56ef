package userdirs

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// env is an environment of a few variables, name then value.
func env(kv ...string) Getenv {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(name string) string { return m[name] }
}

// The directories follow the environment given, not the process's.
func TestFromTheGivenEnvironment(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the XDG rules are those of Linux and the BSDs")
	}
	t.Setenv("HOME", "/process/home")
	t.Setenv("XDG_CONFIG_HOME", "/process/config")
	if h, err := Home(env("HOME", "/u")); err != nil || h != "/u" {
		t.Errorf("Home = %q, %v", h, err)
	}
	if _, err := Home(env()); err == nil {
		t.Error("Home without HOME: no error")
	}
	for _, c := range []struct {
		env  Getenv
		want string
	}{
		{env("HOME", "/u"), "/u/.config"},
		{env("HOME", "/u", "XDG_CONFIG_HOME", "/cfg"), "/cfg"},
	} {
		if got, err := Config(c.env); err != nil || got != c.want {
			t.Errorf("Config = %q, %v; want %q", got, err, c.want)
		}
	}
	if _, err := Config(env("HOME", "/u", "XDG_CONFIG_HOME", "rel")); err == nil {
		t.Error("a relative XDG_CONFIG_HOME: no error")
	}
}

// On the process's own environment the rules agree with the standard
// library's.
func TestAgreesWithTheStandardLibrary(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(t.TempDir(), "cfg"))
	want, werr := os.UserHomeDir()
	got, err := Home(os.Getenv)
	if got != want || (err == nil) != (werr == nil) {
		t.Errorf("Home = %q, %v; os.UserHomeDir %q, %v", got, err, want, werr)
	}
	want, werr = os.UserConfigDir()
	got, err = Config(os.Getenv)
	if got != want || (err == nil) != (werr == nil) {
		t.Errorf("Config = %q, %v; os.UserConfigDir %q, %v", got, err, want, werr)
	}
}
