package themes

import (
	"errors"
	"strings"
	"testing"
)

func TestChoose(t *testing.T) {
	cases := []struct {
		configured  string
		dark, noCol bool
		want        string
		wantErr     bool
	}{
		{"", true, false, NameDark, false},
		{"", false, false, NameLight, false},
		{"auto", false, false, NameLight, false},
		{"high_contrast", false, false, NameHighContrast, false},
		{"Light", true, false, NameLight, false},
		{"dark", true, true, NameNoColor, false},
		{"neon", true, false, NameDark, true},
	}
	for _, c := range cases {
		th, err := Choose(c.configured, c.dark, c.noCol)
		if th.Name != c.want || (err != nil) != c.wantErr {
			t.Errorf("Choose(%q, %v, %v) = %s, %v", c.configured, c.dark, c.noCol, th.Name, err)
		}
	}
	_, err := ByName("neon")
	var ute *UnknownThemeError
	if !errors.As(err, &ute) || !strings.Contains(err.Error(), "dark, high-contrast, light, no-color") {
		t.Fatalf("got %v", err)
	}
}

func TestNoColorStylesHaveNoColour(t *testing.T) {
	s := NewStyles(NoColor())
	for name, st := range map[string]interface{ Render(...string) string }{
		"text": s.Text, "error": s.Error, "cursor": s.Cursor, "tab": s.TabActive, "json": s.JSONKey, "countdown": s.CountdownLow,
	} {
		out := st.Render("x")
		if strings.Contains(out, "38;") || strings.Contains(out, "48;") { // foreground or background colour
			t.Errorf("%s style carries a colour: %q", name, out)
		}
	}
}

func TestEveryThemeNamesEveryColour(t *testing.T) {
	for _, th := range []Theme{Dark(), Light(), HighContrast()} {
		if th.PrimaryText == nil || th.Danger == nil || th.Accent == nil || th.CursorBackground == nil || th.JSONKey == nil {
			t.Errorf("%s lacks a colour", th.Name)
		}
	}
}
