// Package themes holds peeklock's named colour palettes (dark, light, high
// contrast and a colourless one for NO_COLOR) and builds the lipgloss styles
// of the dashboard from them. A theme names colours by meaning, never by hue,
// so that the ui package asks for "the danger colour", not for red.
package themes

import (
	"fmt"
	"image/color"
	"sort"
	"strings"

	"charm.land/lipgloss/v2"
)

// Theme is a palette of colours named for what they mean on screen. A nil
// colour means "the terminal's default" (the NoColor theme has only nil
// colours and relies on bold, faint and reverse video instead).
type Theme struct {
	// Name is the theme's name as used in the config file.
	Name string
	// Dark reports whether the theme is meant for a dark background.
	Dark bool
	// PrimaryText is ordinary text.
	PrimaryText color.Color
	// FaintText is secondary text: column headers, ages, hints.
	FaintText color.Color
	// Accent marks what has the focus: the selected entity, the active tab.
	Accent color.Color
	// AccentText is text drawn on the Accent colour.
	AccentText color.Color
	// CursorBackground is the background of the row under the cursor.
	CursorBackground color.Color
	// SelectedText marks rows selected with space.
	SelectedText color.Color
	// Border is the colour of pane borders and separators.
	Border color.Color
	// Success marks good news: a lock with plenty of time, a finished job.
	Success color.Color
	// Warning marks something running out: a lock in its last half.
	Warning color.Color
	// Danger marks errors, dead letters and locks about to expire.
	Danger color.Color
	// StatusBackground is the background of the status bar.
	StatusBackground color.Color
	// StatusText is the text of the status bar.
	StatusText color.Color
	// JSON syntax colours.
	JSONKey, JSONString, JSONNumber, JSONLiteral color.Color
}

// Names of the built-in themes.
const (
	NameDark         = "dark"
	NameLight        = "light"
	NameHighContrast = "high-contrast"
	NameNoColor      = "no-color"
)

// Dark returns the theme for dark backgrounds.
func Dark() Theme {
	return Theme{
		Name:             NameDark,
		Dark:             true,
		PrimaryText:      lipgloss.Color("#D8DEE9"),
		FaintText:        lipgloss.Color("#7B8496"),
		Accent:           lipgloss.Color("#7AA2F7"),
		AccentText:       lipgloss.Color("#1A1B26"),
		CursorBackground: lipgloss.Color("#2E3450"),
		SelectedText:     lipgloss.Color("#E0AF68"),
		Border:           lipgloss.Color("#414868"),
		Success:          lipgloss.Color("#9ECE6A"),
		Warning:          lipgloss.Color("#E0AF68"),
		Danger:           lipgloss.Color("#F7768E"),
		StatusBackground: lipgloss.Color("#24283B"),
		StatusText:       lipgloss.Color("#C0CAF5"),
		JSONKey:          lipgloss.Color("#7DCFFF"),
		JSONString:       lipgloss.Color("#9ECE6A"),
		JSONNumber:       lipgloss.Color("#FF9E64"),
		JSONLiteral:      lipgloss.Color("#BB9AF7"),
	}
}

// Light returns the theme for light backgrounds.
func Light() Theme {
	return Theme{
		Name:             NameLight,
		Dark:             false,
		PrimaryText:      lipgloss.Color("#2E3440"),
		FaintText:        lipgloss.Color("#6B7280"),
		Accent:           lipgloss.Color("#2E5BBA"),
		AccentText:       lipgloss.Color("#FFFFFF"),
		CursorBackground: lipgloss.Color("#DCE4F5"),
		SelectedText:     lipgloss.Color("#9A5B00"),
		Border:           lipgloss.Color("#B8C0D0"),
		Success:          lipgloss.Color("#2E7D32"),
		Warning:          lipgloss.Color("#B26A00"),
		Danger:           lipgloss.Color("#C62828"),
		StatusBackground: lipgloss.Color("#E5E9F0"),
		StatusText:       lipgloss.Color("#2E3440"),
		JSONKey:          lipgloss.Color("#005F87"),
		JSONString:       lipgloss.Color("#2E7D32"),
		JSONNumber:       lipgloss.Color("#B85C00"),
		JSONLiteral:      lipgloss.Color("#7B1FA2"),
	}
}

// HighContrast returns a theme of the 16 basic ANSI colours at full
// brightness, readable on any background and in poor light.
func HighContrast() Theme {
	return Theme{
		Name:             NameHighContrast,
		Dark:             true,
		PrimaryText:      lipgloss.BrightWhite,
		FaintText:        lipgloss.White,
		Accent:           lipgloss.BrightYellow,
		AccentText:       lipgloss.Black,
		CursorBackground: lipgloss.Blue,
		SelectedText:     lipgloss.BrightCyan,
		Border:           lipgloss.BrightWhite,
		Success:          lipgloss.BrightGreen,
		Warning:          lipgloss.BrightYellow,
		Danger:           lipgloss.BrightRed,
		StatusBackground: lipgloss.BrightWhite,
		StatusText:       lipgloss.Black,
		JSONKey:          lipgloss.BrightCyan,
		JSONString:       lipgloss.BrightGreen,
		JSONNumber:       lipgloss.BrightYellow,
		JSONLiteral:      lipgloss.BrightMagenta,
	}
}

// NoColor returns the theme without any colour, for NO_COLOR: emphasis comes
// from bold, faint, underline and reverse video only.
func NoColor() Theme { return Theme{Name: NameNoColor, Dark: true} }

// Names returns the names of the built-in themes, sorted.
func Names() []string {
	n := []string{NameDark, NameLight, NameHighContrast, NameNoColor}
	sort.Strings(n)
	return n
}

// ByName returns the built-in theme of that name (case-insensitive;
// "highcontrast" and "high_contrast" are accepted too). An unknown name is an
// *UnknownThemeError.
func ByName(name string) (Theme, error) {
	switch strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "_", "-") {
	case NameDark:
		return Dark(), nil
	case NameLight:
		return Light(), nil
	case NameHighContrast, "highcontrast":
		return HighContrast(), nil
	case NameNoColor, "nocolor", "none":
		return NoColor(), nil
	}
	return Theme{}, &UnknownThemeError{Name: name}
}

// UnknownThemeError is the error of ByName for a name it does not know.
type UnknownThemeError struct {
	Name string
}

// Error names the theme and lists the known ones.
func (e *UnknownThemeError) Error() string {
	return fmt.Sprintf("unknown theme %q (known: %s)", e.Name, strings.Join(Names(), ", "))
}

// Choose picks the theme to use: NO_COLOR wins over everything, then a
// configured name, then the detected background (dark or light). An unknown
// configured name is an error and the background's theme is returned with it.
func Choose(configured string, darkBackground, noColor bool) (Theme, error) {
	if noColor {
		return NoColor(), nil
	}
	fallback := Light()
	if darkBackground {
		fallback = Dark()
	}
	if configured == "" || strings.EqualFold(configured, "auto") {
		return fallback, nil
	}
	t, err := ByName(configured)
	if err != nil {
		return fallback, err
	}
	return t, nil
}
