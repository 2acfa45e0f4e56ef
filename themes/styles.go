package themes

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// Styles are the lipgloss styles of every part of the dashboard, built from
// one Theme by NewStyles. The ui package renders with them and never builds
// colours of its own.
type Styles struct {
	// Theme is the palette the styles were built from.
	Theme Theme

	Text      lipgloss.Style
	Faint     lipgloss.Style
	Bold      lipgloss.Style
	Title     lipgloss.Style
	Header    lipgloss.Style // column headers
	Border    lipgloss.Style // separators and box lines
	Cursor    lipgloss.Style // the row under the cursor
	Selected  lipgloss.Style // a row selected with space
	Held      lipgloss.Style // marker of a lock held by this dashboard
	Error     lipgloss.Style
	Warning   lipgloss.Style
	Success   lipgloss.Style
	Flash     lipgloss.Style // a row whose lock just expired or was lost
	Highlight lipgloss.Style // filter matches and jump targets

	TabActive   lipgloss.Style
	TabInactive lipgloss.Style

	EntitySelected lipgloss.Style
	EntityNormal   lipgloss.Style
	Sparkline      lipgloss.Style

	// Countdown bar colours: plenty of time, half gone, nearly out.
	CountdownOK    lipgloss.Style
	CountdownWarn  lipgloss.Style
	CountdownLow   lipgloss.Style
	CountdownTrack lipgloss.Style

	StatusBar   lipgloss.Style
	StatusKey   lipgloss.Style // labels such as "live" / "paused"
	StatusError lipgloss.Style

	DialogBox   lipgloss.Style
	DialogTitle lipgloss.Style
	Label       lipgloss.Style

	HelpKey  lipgloss.Style
	HelpDesc lipgloss.Style
	HelpSep  lipgloss.Style

	JSONKey     lipgloss.Style
	JSONString  lipgloss.Style
	JSONNumber  lipgloss.Style
	JSONLiteral lipgloss.Style
	JSONPunct   lipgloss.Style
}

// NewStyles builds the styles of theme t. The NoColor theme gets styles that
// use only bold, faint, underline and reverse video.
func NewStyles(t Theme) *Styles {
	fg := func(c color.Color) lipgloss.Style {
		s := lipgloss.NewStyle()
		if c != nil {
			s = s.Foreground(c)
		}
		return s
	}
	noColor := t.PrimaryText == nil
	s := &Styles{Theme: t}
	s.Text = fg(t.PrimaryText)
	s.Faint = fg(t.FaintText).Faint(noColor)
	s.Bold = fg(t.PrimaryText).Bold(true)
	s.Title = fg(t.Accent).Bold(true)
	s.Header = fg(t.FaintText).Bold(true)
	s.Border = fg(t.Border).Faint(noColor)
	s.Cursor = lipgloss.NewStyle().Bold(true)
	if noColor {
		s.Cursor = s.Cursor.Reverse(true)
	} else {
		s.Cursor = s.Cursor.Background(t.CursorBackground).Foreground(t.PrimaryText)
	}
	s.Selected = fg(t.SelectedText).Bold(true).Underline(noColor)
	s.Held = fg(t.Accent).Bold(true)
	s.Error = fg(t.Danger).Bold(true)
	s.Warning = fg(t.Warning)
	s.Success = fg(t.Success)
	s.Flash = lipgloss.NewStyle().Bold(true).Reverse(true)
	if !noColor {
		s.Flash = s.Flash.Foreground(t.Danger)
	}
	s.Highlight = fg(t.Warning).Bold(true).Underline(true)

	s.TabActive = lipgloss.NewStyle().Bold(true).Padding(0, 1)
	if noColor {
		s.TabActive = s.TabActive.Reverse(true)
	} else {
		s.TabActive = s.TabActive.Background(t.Accent).Foreground(t.AccentText)
	}
	s.TabInactive = fg(t.FaintText).Padding(0, 1)

	s.EntitySelected = fg(t.Accent).Bold(true).Reverse(noColor)
	s.EntityNormal = fg(t.PrimaryText)
	s.Sparkline = fg(t.Accent)

	s.CountdownOK = fg(t.Success)
	s.CountdownWarn = fg(t.Warning).Bold(noColor)
	s.CountdownLow = fg(t.Danger).Bold(true)
	s.CountdownTrack = fg(t.Border).Faint(true)

	s.StatusBar = lipgloss.NewStyle()
	if noColor {
		s.StatusBar = s.StatusBar.Reverse(true)
	} else {
		s.StatusBar = s.StatusBar.Background(t.StatusBackground).Foreground(t.StatusText)
	}
	s.StatusKey = s.StatusBar.Bold(true)
	s.StatusError = s.StatusBar.Bold(true)
	if !noColor {
		s.StatusError = s.StatusError.Foreground(t.Danger)
	}

	s.DialogBox = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).Padding(0, 1)
	if !noColor {
		s.DialogBox = s.DialogBox.BorderForeground(t.Accent)
	}
	s.DialogTitle = fg(t.Accent).Bold(true)
	s.Label = fg(t.FaintText).Bold(true)

	s.HelpKey = fg(t.Accent).Bold(true)
	s.HelpDesc = fg(t.PrimaryText)
	s.HelpSep = fg(t.FaintText).Faint(noColor)

	s.JSONKey = fg(t.JSONKey).Bold(noColor)
	s.JSONString = fg(t.JSONString)
	s.JSONNumber = fg(t.JSONNumber)
	s.JSONLiteral = fg(t.JSONLiteral).Italic(noColor)
	s.JSONPunct = fg(t.FaintText)
	return s
}
