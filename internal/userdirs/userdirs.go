// Package userdirs says where the user's files are, from an environment
// given as a lookup function: the command line passes its own (the
// variables it was started with, which a test sets without touching the
// process), so that the config file, the dashboard's state and the local
// CA follow them. The rules are those os.UserHomeDir and os.UserConfigDir
// document, per operating system.
package userdirs

import (
	"errors"
	"path/filepath"
	"runtime"
)

// Getenv returns the value of an environment variable, "" when it is not
// set (os.Getenv for the process's own).
type Getenv func(name string) string

// Home returns the user's home directory: $HOME, %USERPROFILE% on Windows,
// $home on Plan 9.
func Home(getenv Getenv) (string, error) {
	name := "HOME"
	switch runtime.GOOS {
	case "windows":
		name = "USERPROFILE"
	case "plan9":
		name = "home"
	}
	if v := getenv(name); v != "" {
		return v, nil
	}
	return "", errors.New("$" + name + " is not set")
}

// Config returns the user's configuration directory: %AppData% on Windows,
// $HOME/Library/Application Support on macOS and iOS, $home/lib on Plan 9,
// and elsewhere $XDG_CONFIG_HOME when it is an absolute path, else
// $HOME/.config.
func Config(getenv Getenv) (string, error) {
	switch runtime.GOOS {
	case "windows":
		if v := getenv("AppData"); v != "" {
			return v, nil
		}
		return "", errors.New("%AppData% is not set")
	case "darwin", "ios":
		return under(getenv, "Library", "Application Support")
	case "plan9":
		return under(getenv, "lib")
	}
	if v := getenv("XDG_CONFIG_HOME"); v != "" {
		if !filepath.IsAbs(v) {
			return "", errors.New("$XDG_CONFIG_HOME is a relative path")
		}
		return v, nil
	}
	return under(getenv, ".config")
}

// under returns the path elems in the home directory.
func under(getenv Getenv, elems ...string) (string, error) {
	home, err := Home(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(append([]string{home}, elems...)...), nil
}
