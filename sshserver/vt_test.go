package sshserver

import (
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"
)

// vtScreen is a small virtual terminal for the tests: it applies the cursor
// movements, erasures, scrolling and insertions that Bubble Tea's renderer
// writes, so that the tests can read the screen as text. Colours and other
// attributes are ignored.
type vtScreen struct {
	mu          sync.Mutex
	p           *ansi.Parser
	w, h        int
	cells       [][]rune
	x, y        int
	savedX      int
	savedY      int
	top, bottom int // scroll region, inclusive
	wrapNext    bool
	autowrap    bool
	insert      bool
	last        rune
	bytes       int
}

func newVTScreen(w, h int) *vtScreen {
	s := &vtScreen{p: ansi.NewParser(), autowrap: true}
	s.resize(w, h)
	s.p.SetHandler(ansi.Handler{
		Print:     s.print,
		Execute:   s.execute,
		HandleCsi: s.csi,
		HandleEsc: s.esc,
	})
	return s
}

// Write feeds terminal output.
func (s *vtScreen) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bytes += len(b)
	s.p.Parse(b)
	return len(b), nil
}

// Bytes returns how many bytes the screen was fed.
func (s *vtScreen) Bytes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// resize changes the size, keeping what fits.
func (s *vtScreen) resize(w, h int) {
	cells := make([][]rune, h)
	for y := range cells {
		cells[y] = blankRow(w)
		if y < len(s.cells) {
			copy(cells[y], s.cells[y])
		}
	}
	s.cells, s.w, s.h = cells, w, h
	s.top, s.bottom = 0, h-1
	s.x, s.y = min(s.x, w-1), min(s.y, h-1)
}

// Resize changes the size (the terminal window changed).
func (s *vtScreen) Resize(w, h int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resize(w, h)
}

// String returns the screen, rows joined by newlines, trailing spaces cut.
func (s *vtScreen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	rows := make([]string, s.h)
	for y, r := range s.cells {
		var b strings.Builder
		for _, c := range r {
			if c != 0 { // 0 is the second cell of a wide rune
				b.WriteRune(c)
			}
		}
		rows[y] = strings.TrimRight(b.String(), " ")
	}
	return strings.Join(rows, "\n")
}

func blankRow(w int) []rune {
	r := make([]rune, w)
	for i := range r {
		r[i] = ' '
	}
	return r
}

func (s *vtScreen) print(r rune) {
	wd := ansi.StringWidth(string(r))
	if wd == 0 {
		return // combining marks and the like: ignored
	}
	if s.wrapNext {
		if s.autowrap {
			s.x = 0
			s.lineFeed()
		}
		s.wrapNext = false
	}
	if s.x+wd > s.w {
		if !s.autowrap {
			s.x = s.w - wd
		} else {
			s.x = 0
			s.lineFeed()
		}
	}
	row := s.cells[s.y]
	if s.insert {
		copy(row[s.x+wd:], row[s.x:])
	}
	row[s.x] = r
	for i := 1; i < wd && s.x+i < s.w; i++ {
		row[s.x+i] = 0
	}
	s.last = r
	if s.x+wd >= s.w {
		s.x = s.w - 1
		s.wrapNext = true
		return
	}
	s.x += wd
}

func (s *vtScreen) execute(b byte) {
	switch b {
	case ansi.CR:
		s.x, s.wrapNext = 0, false
	case ansi.LF, ansi.VT, ansi.FF:
		s.lineFeed()
		s.wrapNext = false
	case ansi.BS:
		if s.x > 0 {
			s.x--
		}
		s.wrapNext = false
	case ansi.HT:
		s.x = min(s.w-1, (s.x/8+1)*8)
	}
}

// lineFeed moves down a row, scrolling the region at its bottom.
func (s *vtScreen) lineFeed() {
	if s.y == s.bottom {
		s.scrollUp(1)
		return
	}
	if s.y < s.h-1 {
		s.y++
	}
}

func (s *vtScreen) scrollUp(n int) {
	for range n {
		copy(s.cells[s.top:s.bottom], s.cells[s.top+1:s.bottom+1])
		s.cells[s.bottom] = blankRow(s.w)
	}
}

func (s *vtScreen) scrollDown(n int) {
	for range n {
		copy(s.cells[s.top+1:s.bottom+1], s.cells[s.top:s.bottom])
		s.cells[s.top] = blankRow(s.w)
	}
}

func (s *vtScreen) esc(cmd ansi.Cmd) {
	switch cmd.Final() {
	case 'M': // reverse index
		if s.y == s.top {
			s.scrollDown(1)
		} else if s.y > 0 {
			s.y--
		}
	case 'D': // index
		s.lineFeed()
	case 'E': // next line
		s.x = 0
		s.lineFeed()
	case '7':
		s.savedX, s.savedY = s.x, s.y
	case '8':
		s.x, s.y = s.savedX, s.savedY
	case 'c': // full reset
		s.resize(s.w, s.h)
		s.eraseRows(0, s.h)
		s.x, s.y = 0, 0
	}
	s.wrapNext = false
}

func (s *vtScreen) eraseRows(from, to int) {
	for y := max(from, 0); y < min(to, s.h); y++ {
		s.cells[y] = blankRow(s.w)
	}
}

func (s *vtScreen) eraseCols(y, from, to int) {
	for x := max(from, 0); x < min(to, s.w); x++ {
		s.cells[y][x] = ' '
	}
}

func (s *vtScreen) csi(cmd ansi.Cmd, params ansi.Params) {
	n := func(i, def int) int {
		v, _, _ := params.Param(i, def)
		if v == 0 && def > 0 {
			v = def
		}
		return v
	}
	clampX := func(x int) int { return max(0, min(x, s.w-1)) }
	clampY := func(y int) int { return max(0, min(y, s.h-1)) }
	private := cmd.Prefix() == '?'
	switch cmd.Final() {
	case 'A':
		s.y = max(s.y-n(0, 1), 0)
	case 'B':
		s.y = clampY(s.y + n(0, 1))
	case 'C':
		s.x = clampX(s.x + n(0, 1))
	case 'D':
		s.x = clampX(s.x - n(0, 1))
	case 'E':
		s.x, s.y = 0, clampY(s.y+n(0, 1))
	case 'F':
		s.x, s.y = 0, clampY(s.y-n(0, 1))
	case 'G', '`':
		s.x = clampX(n(0, 1) - 1)
	case 'd':
		s.y = clampY(n(0, 1) - 1)
	case 'H', 'f':
		s.y, s.x = clampY(n(0, 1)-1), clampX(n(1, 1)-1)
	case 'I':
		for range n(0, 1) {
			s.x = min(s.w-1, (s.x/8+1)*8)
		}
	case 'Z':
		for range n(0, 1) {
			s.x = max(0, (s.x-1)/8*8)
		}
	case 'J':
		switch n(0, 0) {
		case 0:
			s.eraseCols(s.y, s.x, s.w)
			s.eraseRows(s.y+1, s.h)
		case 1:
			s.eraseCols(s.y, 0, s.x+1)
			s.eraseRows(0, s.y)
		case 2, 3:
			s.eraseRows(0, s.h)
		}
	case 'K':
		switch n(0, 0) {
		case 0:
			s.eraseCols(s.y, s.x, s.w)
		case 1:
			s.eraseCols(s.y, 0, s.x+1)
		case 2:
			s.eraseCols(s.y, 0, s.w)
		}
	case 'X':
		s.eraseCols(s.y, s.x, s.x+n(0, 1))
	case '@':
		row := s.cells[s.y]
		k := min(n(0, 1), s.w-s.x)
		copy(row[s.x+k:], row[s.x:])
		s.eraseCols(s.y, s.x, s.x+k)
	case 'P':
		row := s.cells[s.y]
		k := min(n(0, 1), s.w-s.x)
		copy(row[s.x:], row[s.x+k:])
		s.eraseCols(s.y, s.w-k, s.w)
	case 'L', 'M':
		if s.y < s.top || s.y > s.bottom {
			break
		}
		top := s.top
		s.top = s.y
		if cmd.Final() == 'L' {
			s.scrollDown(min(n(0, 1), s.bottom-s.y+1))
		} else {
			s.scrollUp(min(n(0, 1), s.bottom-s.y+1))
		}
		s.top = top
		s.x = 0
	case 'S':
		s.scrollUp(min(n(0, 1), s.bottom-s.top+1))
	case 'T':
		if !private {
			s.scrollDown(min(n(0, 1), s.bottom-s.top+1))
		}
	case 'b':
		for range n(0, 1) {
			s.print(s.last)
		}
	case 'r':
		top, bottom := n(0, 1)-1, n(1, s.h)-1
		if top < bottom && bottom < s.h {
			s.top, s.bottom = top, bottom
		} else {
			s.top, s.bottom = 0, s.h-1
		}
		s.x, s.y = 0, 0
	case 'h', 'l':
		set := cmd.Final() == 'h'
		params.ForEach(0, func(_, p int, _ bool) {
			switch {
			case private && p == 7:
				s.autowrap = set
			case private && (p == 1049 || p == 47 || p == 1047):
				s.eraseRows(0, s.h)
			case !private && p == 4:
				s.insert = set
			}
		})
	}
	if cmd.Final() != 'b' {
		s.wrapNext = false
	}
}
