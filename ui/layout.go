package ui

// Rect is a rectangle of cells; X and Y are zero-based screen coordinates.
type Rect struct{ X, Y, W, H int }

// Contains reports whether the cell (x, y) is inside r.
func (r Rect) Contains(x, y int) bool {
	return x >= r.X && x < r.X+r.W && y >= r.Y && y < r.Y+r.H
}

// PaneSlot is where one pane is drawn. Index is the pane's position in
// broker.Categories.
type PaneSlot struct {
	Index int
	Rect  Rect
}

// PaneChrome is the number of lines of a pane that are not message rows:
// its title and its column header.
const PaneChrome = 2

// Rows returns how many message rows the pane shows: the size of the Browse
// window the model asks for.
func (s PaneSlot) Rows() int { return max(0, s.Rect.H-PaneChrome) }

// Layout is the geometry of the screen. The model computes it with
// NewLayout to size its Browse windows and to map mouse clicks, and the view
// draws into the same rectangles.
type Layout struct {
	Width, Height int
	// Narrow is true when only one pane fits; the tab line then says which.
	Narrow bool
	// Tabs is the line above the panes with the pane names and counts.
	Tabs Rect
	// Sidebar is the entity list (zero width on very narrow screens).
	Sidebar Rect
	// Main is the area of the panes and of the detail view.
	Main Rect
	// Panes are the visible panes, in pane order.
	Panes []PaneSlot
	// HelpLine is the one-line key help.
	HelpLine Rect
	// Status is the status bar, the last line.
	Status Rect
}

// Layout thresholds.
const (
	minPaneHeight    = 12  // a pane of its own in a multi-pane layout
	multiPaneWidth   = 70  // narrower pane areas show one pane with tabs
	twoColumnWidth   = 140 // wider pane areas show panes in two columns
	sidebarWideWidth = 120 // from this screen width the sidebar shows every count
)

// SidebarWidth returns the width of the entity list for a screen width.
func SidebarWidth(w int) int {
	switch {
	case w < 60:
		return 0
	case w < sidebarWideWidth:
		return 24
	case w < 180:
		return 44
	}
	return 52
}

// NewLayout computes the geometry for a w×h screen with pane focus (an
// index into broker.Categories) focused: the visible panes always include
// the focused one.
func NewLayout(w, h, focus int) Layout {
	w, h = max(w, 1), max(h, 4)
	l := Layout{Width: w, Height: h}
	l.Status = Rect{0, h - 1, w, 1}
	l.HelpLine = Rect{0, h - 2, w, 1}
	sw := SidebarWidth(w)
	bodyH := h - 2 // above the help line
	l.Sidebar = Rect{0, 0, sw, bodyH}
	mx := 0
	if sw > 0 {
		mx = sw + 1 // one column of separator
	}
	l.Tabs = Rect{mx, 0, w - mx, 1}
	l.Main = Rect{mx, 1, w - mx, bodyH - 1}
	area := l.Main
	focus = min(max(focus, 0), 4)

	if area.W < multiPaneWidth || area.H < 2*minPaneHeight {
		l.Narrow = true
		l.Panes = []PaneSlot{{Index: focus, Rect: area}}
		return l
	}
	cols := 1
	if area.W >= twoColumnWidth {
		cols = 2
	}
	perCol := max(1, area.H/minPaneHeight)
	n := min(5, cols*perCol)
	if n == 1 {
		l.Narrow = true
		l.Panes = []PaneSlot{{Index: focus, Rect: area}}
		return l
	}
	start := 0
	if focus >= n {
		start = focus - n + 1
	}
	// Fill columns left to right; the first column takes the extra pane.
	colW := (area.W - (cols - 1)) / cols
	idx := start
	remaining := n
	for c := 0; c < cols && remaining > 0; c++ {
		inCol := (remaining + (cols - c - 1)) / (cols - c)
		x := area.X + c*(colW+1)
		wc := colW
		if c == cols-1 {
			wc = area.X + area.W - x
		}
		y := area.Y
		for k := 0; k < inCol; k++ {
			ph := area.H / inCol
			if k == inCol-1 {
				ph = area.Y + area.H - y
			}
			l.Panes = append(l.Panes, PaneSlot{Index: idx, Rect: Rect{x, y, wc, ph}})
			y += ph
			idx++
		}
		remaining -= inCol
	}
	return l
}

// Slot returns the slot of pane index and whether it is visible.
func (l Layout) Slot(index int) (PaneSlot, bool) {
	for _, s := range l.Panes {
		if s.Index == index {
			return s, true
		}
	}
	return PaneSlot{}, false
}
