package seed

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Progress draws a one-line progress bar (percent, rows per second, time
// left) on a terminal, redrawing it in place at most ten times a second.
type Progress struct {
	mu        sync.Mutex
	w         io.Writer
	total     int
	done      int
	start     time.Time
	lastDrawn time.Time
	drawnDone int // done at the last drawing
	now       func() time.Time
}

// NewProgress starts a progress bar of total rows on w.
func NewProgress(w io.Writer, total int) *Progress {
	return &Progress{w: w, total: total, start: time.Now(), now: time.Now}
}

// Add counts n more rows done and redraws the bar if it is due.
func (p *Progress) Add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	if t := p.now(); t.Sub(p.lastDrawn) >= 100*time.Millisecond || p.done >= p.total {
		p.lastDrawn = t
		p.draw(t)
	}
}

// Finish draws the final state and ends the line.
func (p *Progress) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawnDone != p.done || p.lastDrawn.IsZero() {
		p.draw(p.now())
	}
	fmt.Fprintln(p.w)
}

func (p *Progress) draw(t time.Time) {
	p.drawnDone = p.done
	const width = 30
	frac := 1.0
	if p.total > 0 {
		frac = min(float64(p.done)/float64(p.total), 1)
	}
	filled := int(frac * width)
	elapsed := t.Sub(p.start)
	rate := 0.0
	if elapsed > 0 {
		rate = float64(p.done) / elapsed.Seconds()
	}
	eta := "--:--"
	if rate > 0 {
		eta = clock(time.Duration(float64(p.total-p.done) / rate * float64(time.Second)))
	}
	fmt.Fprintf(p.w, "\r[%s%s] %5.1f%%  %s/%s  %s rows/s  elapsed %s  ETA %s ",
		strings.Repeat("#", filled), strings.Repeat(".", width-filled), frac*100,
		thousands(p.done), thousands(p.total), thousands(int(rate)), clock(elapsed), eta)
}

// clock renders a duration as m:ss or h:mm:ss.
func clock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// thousands renders n with thousands separators.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
