package jsvalue

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/herald-notify/herald/internal/nodetest"
)

// dateSeed fixes the generated date strings.
const dateSeed = 20250615

// TestParseDateAgainstV8 compares ParseDate with new Date(s).getTime() in
// Node.js (TZ=UTC) over date-like strings, ISO forms and the legacy
// parser's, then over the same pieces with Unicode white space and
// characters beyond ASCII put in.
func TestParseDateAgainstV8(t *testing.T) {
	node := nodetest.RequireTool(t, "node")
	inputs := dateStrings(dateSeed, 3000)
	inputs = append(inputs, drawDates(rand.New(rand.NewSource(dateSeed+1)), 1000, append(datePieces, unicodePieces...))...)
	stdin, err := json.Marshal(inputs)
	if err != nil {
		t.Fatal(err)
	}
	script := `let s='';process.stdin.on('data',c=>s+=c).on('end',()=>{` +
		`process.stdout.write(JSON.stringify(JSON.parse(s).map(x=>{const t=new Date(x).getTime();return Number.isNaN(t)?null:t})))})`
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "-e", script)
	cmd.Env = append(os.Environ(), "TZ=UTC", "NO_COLOR=1")
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got []*float64
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	differ := 0
	for i, s := range inputs {
		want := math.NaN()
		if got[i] != nil {
			want = *got[i]
		}
		have := ParseDate(s)
		if have == want || (math.IsNaN(have) && math.IsNaN(want)) {
			continue
		}
		differ++
		if differ <= 30 {
			t.Errorf("new Date(%q): V8 %v, Herald %v", s, time.UnixMilli(int64(want)).UTC(), time.UnixMilli(int64(have)).UTC())
		}
	}
	t.Logf("%d of %d date strings differ", differ, len(inputs))
}

// datePieces are what drawDates puts together.
var datePieces = []string{
	"2024", "2025", "-", "-", "/", ":", ".", " ", " ", "T", "Z", "01", "12", "31", "1", "5", "99", "00", "24", "59", "60",
	"Jan", "march", "Dec", "am", "PM", "GMT", "UTC", "EST", "z", "t", "+", "+0100", "-08:00", "(x)", ")", ",", "foo",
	"123456", "1234567890", "é", "Mon", "0", "000", "123",
}

// unicodePieces are white space and line terminators beyond ASCII, a
// character beyond the BMP and an offset whose seconds wrap in 32 bits.
var unicodePieces = []string{"\u00a0", "\u3000", "\u2028", "\u2029", "\ufeff", "\u2009", "\u0085", "\U0001F600", "+1193047:00", "\x00"}

// dateStrings draws date-like strings: ISO forms, the legacy parser's forms,
// and pieces of both put together.
func dateStrings(seed int64, n int) []string {
	r := rand.New(rand.NewSource(seed))
	fixed := []string{
		"2024-01-02", "2024-01-02T10:00", "2024-01-02T10:00:00", "2024-01-02T10:00:00Z", "2024-01-02T10:00:00.1Z",
		"2024-01-02T10:00:00.123456789Z", "2024-01-02t10:00:00z", "2024-01-02T24:00:00Z", "2024-01-02T24:00:01Z",
		"2024-01-02T10:00:00+01:00", "2024-01-02T10:00:00-0130", "2024-01-02T10:00:00 +01:00", "+002024-01-02",
		"-000001-01-01T00:00:00Z", "-000000-01-01", "2024-13-01", "2024-02-30", "2024-1-2", "20240102", "2024",
		"2024-01", "2024-01-02T10", "T10:00", "10:00", "2024-01-02Z", "2024/01/02", "Jan 2 2024", "2 January 2024",
		"Tue, 02 Jan 2024 10:00:00 GMT", "Tue Jan 02 2024 10:00:00 GMT+0100 (Central European Time)", "abc", "a 1",
		"vip 2", "1", "12", "1.5", "-1", "May", "May 5", "5 May", "12/31/1999 11:59 pm", "12:00 am 1/1/2000",
		"2000-01-01 12:00:00 PST", "2000-01-01 12:00:00 UTC+2", "2000-01-01 12:00:00 UT", "(comment) 2020 (x",
		"2020 )", "Jan 1 2020 10:00:00.5", "1/2/3", "99-12-31", "1e3", "0x1f", "Infinity", "true", "", " ",
		"2024-01-02\x00garbage", "2024-01-02 10:00::", "10:: 2020", "2020 10:20:30:40", "2020 10.30", "2020-06-15T12:00:00.000+05:45",
	}
	return append(fixed, drawDates(r, n-len(fixed), datePieces)...)
}

// drawDates puts n strings together from one to seven pieces each.
func drawDates(r *rand.Rand, n int, pieces []string) []string {
	out := make([]string, 0, n)
	for len(out) < n {
		var b strings.Builder
		for k := 1 + r.Intn(7); k > 0; k-- {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		out = append(out, b.String())
	}
	return out
}
