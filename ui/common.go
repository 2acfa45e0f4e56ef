package ui

import (
	"time"

	"github.com/peeklock/peeklock/keymap"
	"github.com/peeklock/peeklock/themes"
)

// Common is what every part of the screen needs: the size of the screen,
// the styles, the key map (for help texts) and the time of the frame, which
// comes from the model's clock so that views are reproducible.
type Common struct {
	Width, Height int
	Styles        *themes.Styles
	KeyMap        *keymap.KeyMap
	Now           time.Time
}
