package ui

import (
	"slices"

	"github.com/peeklock/peeklock/broker"
)

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
// NewLayoutWith to size its Browse windows and to map mouse clicks, and the
// view draws into the same rectangles.
type Layout struct {
	Width, Height int
	// Narrow is true when only one pane is on screen; the tab line then
	// says which.
	Narrow bool
	// Zoomed is true when the focused pane has the whole screen: there is
	// no entity list and no tab line (Tabs is empty).
	Zoomed bool
	// Tabs is the line above the panes with the pane names and counts.
	Tabs Rect
	// Sidebar is the entity list (zero width when hidden or very narrow).
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
	twoColumnWidth   = 140 // wider pane areas show panes in two columns
	sidebarFromWidth = 64  // narrower screens hide the entity list unless asked
	sidebarWideWidth = 120 // from this screen width the sidebar shows every count
	// rowStep rounds up what a pane asks for, so that a count that changes
	// by one rarely moves the panes.
	rowStep = 4
	// minPaneRows is the fewest rows a pane with messages is shown with
	// beside the focused one.
	minPaneRows = 3
)

// SidebarMode says whether the entity list is on screen.
type SidebarMode uint8

// Sidebar modes.
const (
	// SidebarAuto shows the entity list on screens of sidebarFromWidth
	// cells and more.
	SidebarAuto SidebarMode = iota
	// SidebarHidden hides it: the panes take the whole width.
	SidebarHidden
	// SidebarShown shows it at any width where it fits.
	SidebarShown
)

// SidebarWidth returns the width of the entity list for a screen width when
// it is shown by default (0: hidden).
func SidebarWidth(w int) int {
	switch {
	case w < sidebarFromWidth:
		return 0
	case w < sidebarWideWidth:
		return 24
	case w < 180:
		return 44
	}
	return 52
}

// sidebarWidth returns the width of the entity list in mode on a screen w
// cells wide.
func sidebarWidth(w int, mode SidebarMode) int {
	switch mode {
	case SidebarHidden:
		return 0
	case SidebarShown:
		if sw := SidebarWidth(w); sw > 0 {
			return sw
		}
		if w >= 40 {
			return min(24, w/2)
		}
		return 0
	}
	return SidebarWidth(w)
}

// LayoutOptions are what the geometry depends on besides the screen size
// and the focused pane.
type LayoutOptions struct {
	// Zoom gives the focused pane the whole screen but the help line and
	// the status bar.
	Zoom bool
	// Sidebar shows or hides the entity list.
	Sidebar SidebarMode
	// Counts are the counts of the entity on screen, when known: a pane
	// with no message then takes one line (its title) and a pane with few
	// takes what they need, so that the others, the Dead-lettered pane
	// first, get the room. Nil: the focused pane alone takes the room.
	Counts *broker.Counts
}

// NewLayoutWith computes the geometry for a w×h screen with pane focus (an
// index into broker.Categories) focused: the visible panes always include
// the focused one. Below it, as room allows, the Dead-lettered pane when
// it has messages, and then the others, each with the lines its messages
// need (see LayoutOptions.Counts); the focused pane keeps at least half the
// height it could have, or what its messages need.
func NewLayoutWith(w, h, focus int, o LayoutOptions) Layout {
	w, h = max(w, 1), max(h, 4)
	l := Layout{Width: w, Height: h}
	l.Status = Rect{0, h - 1, w, 1}
	l.HelpLine = Rect{0, h - 2, w, 1}
	bodyH := h - 2 // above the help line
	focus = min(max(focus, 0), len(broker.Categories)-1)
	if o.Zoom {
		l.Zoomed, l.Narrow = true, true
		l.Sidebar = Rect{0, 0, 0, bodyH}
		l.Tabs = Rect{0, 0, w, 0}
		l.Main = Rect{0, 0, w, bodyH}
		l.Panes = []PaneSlot{{Index: focus, Rect: l.Main}}
		return l
	}
	sw := sidebarWidth(w, o.Sidebar)
	l.Sidebar = Rect{0, 0, sw, bodyH}
	mx := 0
	if sw > 0 {
		mx = sw + 1 // one column of separator
	}
	l.Tabs = Rect{mx, 0, w - mx, 1}
	l.Main = Rect{mx, 1, w - mx, bodyH - 1}
	area := l.Main
	switch {
	case o.Counts == nil:
		// Nothing known to share the room by: the focused pane takes it.
		l.Panes = []PaneSlot{{Index: focus, Rect: area}}
	case area.W < twoColumnWidth:
		l.Panes = stack(area, []int{0, 1, 2, 3, 4}, focus, o.Counts)
	default:
		colW := (area.W - 1) / 2
		left, right := area, area
		left.W = colW
		right.X, right.W = area.X+colW+1, area.W-colW-1
		// Each column has a pane that gets its leftover room: the focused
		// one, or the column's first (Active) or last (Dead-lettered).
		lf, rf := 0, 4
		if focus <= 2 {
			lf = focus
		} else {
			rf = focus
		}
		l.Panes = append(stack(left, []int{0, 1, 2}, lf, o.Counts), stack(right, []int{3, 4}, rf, o.Counts)...)
	}
	l.Narrow = len(l.Panes) == 1
	return l
}

// stack lays out panes (indexes in category order) in one column of area,
// with focus (one of them) always on screen.
func stack(area Rect, panes []int, focus int, counts *broker.Counts) []PaneSlot {
	H := area.H
	if H < 1 {
		return []PaneSlot{{Index: focus, Rect: area}}
	}
	count := func(i int) int64 { return counts.Count(broker.Categories[i]) }
	// want is what a pane's messages need, least is the least it is shown
	// with.
	want := func(i int) int {
		n := count(i)
		if n == 0 && i != focus {
			return 1
		}
		rows := int(min(n, int64(H)))
		rows = (rows + rowStep - 1) / rowStep * rowStep
		return min(H, PaneChrome+max(rows, 1))
	}
	least := func(i int) int {
		n := count(i)
		if i == focus {
			return min(want(i), max(PaneChrome+minPaneRows, H/2))
		}
		if n == 0 {
			return 1
		}
		return PaneChrome + int(min(n, minPaneRows))
	}
	dlq := len(broker.Categories) - 1
	in := map[int]int{focus: least(focus)}
	used := in[focus]
	if slices.Contains(panes, dlq) && dlq != focus && count(dlq) > 0 && used+least(dlq) <= H {
		in[dlq] = least(dlq)
		used += in[dlq]
	}
	// The others with messages come all together or not at all: a screen
	// that shows some of them and not others would look arbitrary. Empty
	// ones, a title line each, only when the focused pane has all it needs
	// without their lines (the tab line has their counts anyway).
	rest, empty := 0, 0
	for _, i := range panes {
		if _, ok := in[i]; !ok {
			if count(i) == 0 {
				empty++
			} else {
				rest += least(i)
			}
		}
	}
	if used+rest <= H {
		for _, i := range panes {
			if _, ok := in[i]; !ok && count(i) > 0 {
				in[i] = least(i)
			}
		}
		used += rest
		need := 0
		for i, hh := range in {
			need += max(hh, want(i))
		}
		if need+empty <= H {
			for _, i := range panes {
				if _, ok := in[i]; !ok {
					in[i] = 1
				}
			}
			used += empty
		}
	}
	// Share what is left, a line at a time, to the pane furthest below
	// what it needs; then to the focused one.
	for used < H {
		best, gap := -1, 0
		for _, i := range panes {
			if hh, ok := in[i]; ok && want(i)-hh > gap {
				best, gap = i, want(i)-hh
			}
		}
		if best < 0 {
			best = focus
		}
		in[best]++
		used++
	}
	var out []PaneSlot
	y := area.Y
	for _, i := range panes {
		hh, ok := in[i]
		if !ok {
			continue
		}
		out = append(out, PaneSlot{Index: i, Rect: Rect{area.X, y, area.W, hh}})
		y += hh
	}
	return out
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
