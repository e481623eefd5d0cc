package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-notify/herald/internal/nodetest"
)

// cronOracleDir is the Node project that runs cron-parser 4.9.0 as Novu's
// worker does.
var cronOracleDir = filepath.Join("..", "..", "clients", "cron-oracle")

// cronDiffOutEnv names a file to write every case with both results to.
const cronDiffOutEnv = "HERALD_CRON_DIFF_OUT"

// cronGeneratedSeed and cronGeneratedExprs fix the generated expressions.
const (
	cronGeneratedSeed  = 20260308
	cronGeneratedExprs = 400
)

// cronZones are the time zones of the cases: without DST, with DST at 01:00
// UTC, at 02:00 local, at midnight (Santiago: the hour after 23:59 is
// 01:00), of 30 minutes (Lord Howe) and at 02:45 (Chatham).
var cronZones = []string{"UTC", "Asia/Kolkata", "Europe/London", "America/New_York",
	"Australia/Lord_Howe", "America/Santiago", "Pacific/Chatham"}

// cronHandExprs are the hand-written expressions, by what they exercise.
// Every one is run from each of cronProbes; the differences between
// Herald's error messages and cron-parser's are not compared, only
// whether both fail.
var cronHandExprs = []struct{ name, expr string }{
	// Field forms.
	{"every minute", "* * * * *"},
	{"every second", "* * * * * *"},
	{"monday 9", "0 9 * * 1"},
	{"names any case", "0 9 * * mon"},
	{"names upper", "0 9 * * MON"},
	{"names mixed", "0 9 * * Mon,wED,fRi"},
	{"weekdays range", "30 8 * * 1-5"},
	{"weekday names range", "30 8 * * MON-FRI"},
	{"month names", "0 0 1 jan,Jul *"},
	{"month name range", "0 0 1 MAR-may *"},
	{"month names glued", "0 0 1 janfeb *"},
	{"sunday 0", "0 0 * * 0"},
	{"sunday 7", "0 0 * * 7"},
	{"sunday name and 7", "0 0 * * sun,7"},
	{"range to 7", "0 0 * * 5-7"},
	{"range 7-7", "0 0 * * 7-7"},
	{"range 1-7 is a wildcard", "0 0 15 * 1-7"},
	{"range 0-6 is not a wildcard", "0 0 15 * 0-6"},
	{"list of all weekdays", "0 0 15 * 0,1,2,3,4,5,6,7"},
	{"question dom", "0 12 ? * MON"},
	{"question dow", "0 12 1 * ?"},
	{"question both", "0 12 ? * ?"},
	{"star and question", "0 12 * * *,?L"},
	{"minute list", "0,15,30,45 * * * *"},
	{"hour list", "0 8,12,18 * * *"},
	{"hour range", "0 9-17 * * *"},
	{"step star 15", "*/15 * * * *"},
	{"step range", "5-30/5 * * * *"},
	{"step 7", "*/7 * * * *"},
	{"step from value", "5/15 * * * *"},
	{"hour step", "0 */2 * * *"},
	{"dom step", "0 0 */5 * *"},
	{"month step", "0 0 1 */3 *"},
	{"dow step", "0 0 * * */2"},
	{"dow value step", "0 0 * * 1/2"},
	{"dow value step to 7", "0 0 * * 2/3"},
	{"step larger than field", "*/100 * * * *"},
	{"step 60", "5/60 * * * *"},
	{"huge step", "0 0-23/99999999999999999999 * * *"},
	{"duplicates in list", "0 0 1,1,1 * *"},
	// Seconds.
	{"every 10 seconds", "*/10 * * * * *"},
	{"second 30", "30 * * * * *"},
	{"midnight with seconds", "0 0 0 * * *"},
	{"second list", "15,45 * * * * *"},
	{"second range step at 9:30", "0-10/5 30 9 * * *"},
	{"last second of the day", "59 59 23 * * *"},
	// Fewer fields, white space, predefined.
	{"empty", ""},
	{"one field", "5"},
	{"two fields", "0 12"},
	{"three fields", "1 * *"},
	{"four fields", "0 12 * *"},
	{"padded", "  0 9 * * 1  "},
	{"tabs and newlines", "0\t9\n*  * 1"},
	{"no-break space splits", "0\u00a09 * * 1"},
	{"BOM splits", "\ufeff0 9 * * 1\ufeff"},
	{"NEL does not split", "0\u00859 * * 1"},
	{"seven fields", "0 0 9 * * 1 2026"},
	{"yearly", "@yearly"},
	{"monthly", "@monthly"},
	{"weekly", "@weekly"},
	{"daily", "@daily"},
	{"hourly", "@hourly"},
	{"annually unknown", "@annually"},
	{"predefined upper", "@DAILY"},
	{"predefined padded", " @daily"},
	// Day of month and day of week together.
	{"friday or 13th", "0 9 13 * 5"},
	{"1st 15th or monday", "0 0 1,15 * 1"},
	{"man page example", "30 4 1,15 * 5"},
	{"1-30 a wildcard in 30-day months", "0 0 1-30 * 1"},
	{"1-28 never a wildcard", "0 0 1-28 * 1"},
	{"1-29 a wildcard in february", "0 0 1-29 * 1"},
	{"february mondays", "0 0 * 2 1"},
	{"1-29 of february or monday", "0 0 1-29 2 1"},
	{"dom wildcard dow names", "0 0 * * SAT,SUN"},
	// L.
	{"last day", "0 0 L * *"},
	{"last day of february", "0 0 L 2 *"},
	{"15th and last", "0 0 15,L * *"},
	{"5L in day of month", "0 0 5L * *"},
	{"5L in day of month of one month", "0 0 5L 2 *"},
	{"L with a step", "0 0 L/3 * *"},
	{"last friday", "0 0 * * 5L"},
	{"last friday by name", "0 0 * * FRIL"},
	{"last sunday 7L", "0 0 * * 7L"},
	{"15L reads weekday 1", "0 0 * * 15L"},
	{"L alone in day of week", "0 0 * * L"},
	{"monday or L", "0 0 * * 1,L"},
	{"last friday or L", "0 0 * * 5L,L"},
	{"every minute of mondays or L", "* * * * 1,L"},
	{"question L", "0 0 * * *,?L"},
	{"LL in day of month", "0 0 LL * *"},
	{"LLL in day of week", "0 0 * * LLL"},
	{"L range", "0 0 L-5 * *"},
	{"L in hour", "0 L * * *"},
	{"dom L and dow", "0 0 L * 1"},
	// #.
	{"first monday", "0 0 * * 1#1"},
	{"second monday by name", "0 0 * * MON#2"},
	{"fifth friday", "0 0 * * 5#5"},
	{"third monday or 15th", "0 0 15 * 1#3"},
	{"nth 6", "0 0 * * 1#6"},
	{"nth 0", "0 0 * * 1#0"},
	{"nth with list", "0 0 * * 1#1,2"},
	{"nth with range", "0 0 * * 1-2#1"},
	{"nth twice", "0 0 * * 1#2#3"},
	{"nth fraction", "0 0 * * 1#1.5"},
	{"nth hex", "0 0 * * 1#0x3"},
	{"nth exponent", "0 0 * * 1#2e0"},
	{"nth empty", "0 0 * * 1#"},
	{"nth without weekday", "0 0 * * #1"},
	// Month lengths.
	{"29 february", "0 0 29 2 *"},
	{"29 feb by name at noon", "0 12 29 FEB *"},
	{"29 february or monday", "0 0 29 2 1"},
	{"31st", "0 0 31 * *"},
	{"31 april", "0 0 31 4 *"},
	{"30 february", "0 0 30 2 *"},
	{"30,31 february", "0 0 30,31 2 *"},
	{"29-31 february", "0 0 29-31 2 *"},
	{"31st of april or june", "0 0 31 4,6 *"},
	{"31st of every other month", "0 0 31 */2 *"},
	{"february twice", "0 0 30 2,2 *"},
	// JavaScript number quirks.
	{"minus zero", "-0 * * * *"},
	{"minus zero weekday", "0 0 * * -0"},
	{"open range", "0- * * * *"},
	{"range star", "*-5 * * * *"},
	{"three bounds", "1-5-9 * * * *"},
	{"leading zeros", "007 009 * * *"},
	// Refused.
	{"minute 60", "60 * * * *"},
	{"hour 24", "* 24 * * *"},
	{"dom 0", "* * 0 * *"},
	{"dom 32", "* * 32 * *"},
	{"month 13", "* * * 13 *"},
	{"dow 8", "* * * * 8"},
	{"reversed range", "5-1 * * * *"},
	{"step 0", "*/0 * * * *"},
	{"value step 0", "1/0 * * * *"},
	{"letters", "a * * * *"},
	{"weekday long name", "0 9 * * MONDAY"},
	{"weekday two letters", "0 9 * * MO"},
	{"month four letters", "0 0 * JANU *"},
	{"empty list element", "1,,2 * * * *"},
	{"leading comma", ",1 * * * *"},
	{"trailing comma", "1, * * * *"},
	{"two steps", "1/2/3 * * * *"},
	{"step without start", "/5 * * * *"},
	{"step without size", "5/ * * * *"},
	{"lone dash", "- * * * *"},
	{"negative", "-1 * * * *"},
	{"question in hour", "0 0 ? * * *"},
	{"question in month", "0 0 * ? *"},
	{"hash", "#"},
	{"month step 0", "0 0 * 2/0 *"},
	{"decimal", "1.5 * * * *"},
	{"plus sign", "+5 * * * *"},
	// Around DST (in cronZones).
	{"02:30 daily", "30 2 * * *"},
	{"02:00 daily", "0 2 * * *"},
	{"01:00 daily", "0 1 * * *"},
	{"01:30 daily", "30 1 * * *"},
	{"03:00 daily", "0 3 * * *"},
	{"midnight daily", "0 0 * * *"},
	{"every minute of 2", "* 2 * * *"},
	{"1 to 3 hourly", "0 1-3 * * *"},
	{"02:30:00 with seconds", "0 30 2 * * *"},
	{"01:30 and 02:30", "30 1,2 * * *"},
	{"hours 0-3", "0 0,1,2,3 * * *"},
	{"every 30 minutes", "*/30 * * * *"},
	{"every 45 minutes", "*/45 * * * *"},
	{"hour list with duplicates", "0 0-23,2 * * *"},
	{"sunday 02:30", "30 2 * * 0"},
	{"first sunday 02:00", "0 2 * * 0#1"},
	{"every second at 2", "* * 2 * * *"},
}

// cronFarExprs run from instants where their next time is years away.
var cronFarExprs = []struct{ name, expr, from string }{
	{"29 february from 2097", "0 0 29 2 *", "2097-03-01T00:00:00.000Z"},
	{"29 february from 2101", "0 12 29 2 *", "2101-01-01T00:00:00.000Z"},
	{"29 february 2028", "0 0 29 2 *", "2025-03-01T00:00:00.000Z"},
	{"monday 29 february 28 years on", "0 0 * 2 1#5", "2016-03-01T00:00:00.000Z"},
	{"monday 29 february", "0 0 * 2 1#5", "2040-01-01T00:00:00.000Z"},
	{"monday 29 february close", "0 0 * 2 1#5", "2043-06-01T00:00:00.000Z"},
	{"last day of february 2100", "0 0 L 2 *", "2100-02-01T00:00:00.000Z"},
}

// cronCase is one next() to compare, in the oracle's input form.
type cronCase struct {
	Name string `json:"-"`
	Expr string `json:"expr"`
	From string `json:"from"`
	TZ   string `json:"tz"`
}

// cronOutcome is a next instant (Unix milliseconds) or a failure.
type cronOutcome struct {
	Next   int64  `json:"next,omitempty"`
	Error  string `json:"error,omitempty"`
	Failed bool   `json:"failed,omitempty"`
}

func (o cronOutcome) String() string {
	if o.Failed {
		return "error: " + o.Error
	}
	return time.UnixMilli(o.Next).UTC().Format("2006-01-02T15:04:05.000Z")
}

// TestCronDifferential computes the next instant of hand-written and
// generated expressions, from instants around the DST changes of
// cronZones, at the start of 2026 and exactly on a previous match, with
// cron-parser 4.9.0 (clients/cron-oracle) and with Herald, and requires the
// same outcome: both fail, or both give the same instant to the
// millisecond. CheckCron must refuse exactly the expressions cron-parser
// fails on from its instant (2026-01-01 in UTC).
func TestCronDifferential(t *testing.T) {
	zones := map[string]*time.Location{}
	for _, name := range cronZones {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		zones[name] = loc
	}
	probes := cronProbes(t, zones)
	var cases []cronCase
	for _, e := range cronHandExprs {
		// cron-parser takes a third of a second to give up: an expression
		// that selects no time runs from the first three probes only.
		probes := probes
		if _, err := nextCron(e.expr, cronCheckFrom, time.UTC); errors.Is(err, errCronUnreachable) {
			probes = probes[:3]
		}
		for _, p := range probes {
			cases = append(cases, cronCase{Name: e.name + " from " + p.name, Expr: e.expr, From: p.From, TZ: p.TZ})
		}
	}
	for _, e := range cronFarExprs {
		cases = append(cases, cronCase{Name: e.name, Expr: e.expr, From: e.from, TZ: "UTC"})
	}
	cases = append(cases, cronOnMatch(t, cases, zones)...)
	hand := len(cases)
	cases = append(cases, cronGenerated(t, zones)...)
	t.Logf("%d hand-written cases (%d expressions), %d generated (%d expressions)",
		hand, len(cronHandExprs)+len(cronFarExprs), len(cases)-hand, cronGeneratedExprs)

	node, npm := nodetest.RequireTool(t, "node"), nodetest.RequireTool(t, "npm")
	nodetest.NpmCI(t, npm, cronOracleDir)
	novu := runCronOracle(t, node, cases)

	type record struct {
		Name   string      `json:"name"`
		Expr   string      `json:"expr"`
		From   string      `json:"from"`
		TZ     string      `json:"tz"`
		Novu   cronOutcome `json:"novu"`
		Herald cronOutcome `json:"herald"`
	}
	records := make([]record, 0, len(cases))
	differ := 0
	for i, c := range cases {
		h := heraldCron(t, c, zones)
		records = append(records, record{c.Name, c.Expr, c.From, c.TZ, novu[i], h})
		same := h.Failed == novu[i].Failed && h.Next == novu[i].Next
		if same && c.From == cronCheckFrom.Format("2006-01-02T15:04:05.000Z") && c.TZ == "UTC" {
			same = (CheckCron(c.Expr) == "") == !novu[i].Failed
		}
		if same {
			continue
		}
		differ++
		if differ <= 40 {
			t.Errorf("%s: Herald and cron-parser differ\nexpr:   %q\nfrom:   %s in %s\nnovu:   %s\nherald: %s\ncheck:  %q",
				c.Name, c.Expr, c.From, c.TZ, novu[i], h, CheckCron(c.Expr))
		}
	}
	if path := os.Getenv(cronDiffOutEnv); path != "" {
		b, err := json.MarshalIndent(records, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	msg := fmt.Sprintf("%d of %d cases differ from cron-parser 4.9.0 (%d hand-written, %d generated)",
		differ, len(cases), hand, len(cases)-hand)
	if differ > 0 {
		t.Error(msg)
	} else {
		t.Log(msg)
	}
}

// heraldCron is Herald's outcome of a case.
func heraldCron(t *testing.T, c cronCase, zones map[string]*time.Location) cronOutcome {
	from, err := time.Parse(time.RFC3339Nano, c.From)
	if err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	next, err := nextCron(c.Expr, from, zones[c.TZ])
	if err != nil {
		return cronOutcome{Failed: true, Error: err.Error()}
	}
	return cronOutcome{Next: next.UnixMilli()}
}

// cronProbe is an instant and zone to search from.
type cronProbe struct {
	name, From, TZ string
}

// cronProbes are the instants every hand-written expression is run from:
// CheckCron's, one in summer in Kolkata, and, in each zone with DST, three
// hours and one millisecond before each of its 2026 changes and 20 minutes
// after (in the hour repeated, or just past the hour skipped).
func cronProbes(t *testing.T, zones map[string]*time.Location) []cronProbe {
	probes := []cronProbe{
		{"2026 in UTC", cronISO(cronCheckFrom), "UTC"},
		{"june in Kolkata", "2026-06-15T10:20:30.250Z", "Asia/Kolkata"},
	}
	for _, name := range cronZones {
		for _, change := range cronChanges(zones[name], 2026, 2027) {
			probes = append(probes,
				cronProbe{fmt.Sprintf("3h before %s change %s", name, cronISO(change)), cronISO(change.Add(-3 * time.Hour)), name},
				cronProbe{fmt.Sprintf("1ms before %s change %s", name, cronISO(change)), cronISO(change.Add(-time.Millisecond)), name},
				cronProbe{fmt.Sprintf("20m after %s change %s", name, cronISO(change)), cronISO(change.Add(20 * time.Minute)), name})
		}
	}
	if len(probes) < 20 {
		t.Fatalf("only %d probes: is the zone database missing?", len(probes))
	}
	return probes
}

// cronOnMatch are cases that start exactly on an instant an expression
// selects (the next one must be later): from Herald's own results of the
// cases that start three hours before a DST change, which the differential
// test checks in turn.
func cronOnMatch(t *testing.T, cases []cronCase, zones map[string]*time.Location) []cronCase {
	var out []cronCase
	for _, c := range cases {
		if !strings.Contains(c.Name, " from 3h before ") {
			continue
		}
		if h := heraldCron(t, c, zones); !h.Failed {
			out = append(out, cronCase{Name: c.Name + ", on its match", Expr: c.Expr, From: h.String(), TZ: c.TZ})
		}
	}
	return out
}

// cronChanges are the instants a zone's offset changes in [from, to).
func cronChanges(loc *time.Location, from, to int) []time.Time {
	var out []time.Time
	end := time.Date(to, 1, 1, 0, 0, 0, 0, loc)
	for t := time.Date(from, 1, 1, 0, 0, 0, 0, loc); t.Before(end); {
		_, next := t.ZoneBounds()
		if next.IsZero() || !next.Before(end) {
			break
		}
		out = append(out, next)
		t = next
	}
	return out
}

func cronISO(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// cronGenerated are the generated cases: each expression from CheckCron's
// instant, from a random instant within a day and a half of a DST change
// (2025 to 2028) of a random zone, and from Herald's result of that.
func cronGenerated(t *testing.T, zones map[string]*time.Location) []cronCase {
	r := rand.New(rand.NewPCG(cronGeneratedSeed, 0))
	var changes []struct {
		tz string
		at time.Time
	}
	for _, name := range cronZones {
		for _, at := range cronChanges(zones[name], 2025, 2029) {
			changes = append(changes, struct {
				tz string
				at time.Time
			}{name, at})
		}
	}
	var out []cronCase
	for i := range cronGeneratedExprs {
		expr := genCronExpr(r)
		name := fmt.Sprintf("generated %d", i)
		out = append(out, cronCase{Name: name + " from 2026 in UTC", Expr: expr, From: cronISO(cronCheckFrom), TZ: "UTC"})
		var from time.Time
		var tz string
		if r.IntN(5) == 0 { // any instant of 2025-2028
			tz = cronZones[r.IntN(len(cronZones))]
			from = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.Int64N(int64(4 * 365 * 24 * time.Hour))))
		} else {
			ch := changes[r.IntN(len(changes))]
			tz = ch.tz
			from = ch.at.Add(time.Duration(r.Int64N(int64(72*time.Hour))) - 36*time.Hour)
		}
		switch r.IntN(4) { // on the hour, minute, second or millisecond
		case 0:
			from = from.Truncate(time.Hour)
		case 1:
			from = from.Truncate(time.Minute)
		case 2:
			from = from.Truncate(time.Second)
		}
		c := cronCase{Name: fmt.Sprintf("%s from %s in %s", name, cronISO(from), tz), Expr: expr, From: cronISO(from), TZ: tz}
		out = append(out, c)
		if h := heraldCron(t, c, zones); !h.Failed {
			out = append(out, cronCase{Name: c.Name + ", on its match", Expr: expr, From: h.String(), TZ: tz})
		}
	}
	return out
}

// genCronExpr is a random expression: mostly five or six valid fields,
// their values drawn towards the hours DST moves and towards month ends,
// sometimes a field cron-parser refuses.
func genCronExpr(r *rand.Rand) string {
	n := 5
	switch k := r.IntN(20); {
	case k < 6:
		n = 6
	case k == 6:
		n = 1 + r.IntN(4)
	}
	fields := make([]string, n)
	for i := range fields {
		fields[i] = genCronField(r, 6-n+i)
	}
	return strings.Join(fields, " ")
}

// genCronField is one random field (0 second, 1 minute, 2 hour, 3 day of
// month, 4 month, 5 day of week).
func genCronField(r *rand.Rand, field int) string {
	lo, hi := [6]int{0, 0, 0, 1, 1, 0}[field], [6]int{59, 59, 23, 31, 12, 7}[field]
	favourites := [6][]int{{0, 0, 30, 59}, {0, 0, 30, 45, 59}, {0, 1, 2, 2, 3, 23}, {1, 15, 28, 29, 30, 31}, {2, 3, 4, 10, 11}, {0, 1, 5, 6, 7}}[field]
	value := func() int {
		if r.IntN(2) == 0 {
			return favourites[r.IntN(len(favourites))]
		}
		return lo + r.IntN(hi-lo+1)
	}
	name := func(v int) string {
		var names []string
		switch field {
		case 4:
			names = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
			v--
		case 5:
			names = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun"}
		default:
			return strconv.Itoa(v)
		}
		s := []byte(names[v])
		for i := range s {
			if r.IntN(2) == 0 {
				s[i] -= 'a' - 'A'
			}
		}
		return string(s)
	}
	atom := func() string {
		switch k := r.IntN(14); {
		case k < 4:
			return strconv.Itoa(value())
		case k < 6:
			a, b := value(), value()
			return fmt.Sprintf("%d-%d", min(a, b), max(a, b))
		case k < 8:
			return fmt.Sprintf("*/%d", 1+r.IntN(hi/2+1))
		case k == 8:
			a, b := value(), value()
			return fmt.Sprintf("%d-%d/%d", min(a, b), max(a, b), 1+r.IntN(10))
		case k == 9:
			return fmt.Sprintf("%d/%d", value(), 1+r.IntN(20))
		case k == 10:
			return name(value())
		case k == 11 && (field == 4 || field == 5):
			a, b := value(), value()
			return name(min(a, b)) + "-" + name(max(a, b))
		case k == 12 && field == 3:
			return "L"
		case k == 12 && field == 5:
			return fmt.Sprintf("%dL", value())
		}
		return strconv.Itoa(value())
	}
	switch k := r.IntN(40); {
	case k < 14:
		if field == 3 || field == 5 {
			if r.IntN(4) == 0 {
				return "?"
			}
		}
		return "*"
	case k < 30:
		return atom()
	case k < 36:
		parts := make([]string, 2+r.IntN(3))
		for i := range parts {
			parts[i] = atom()
		}
		return strings.Join(parts, ",")
	case k < 38 && field == 5:
		return fmt.Sprintf("%s#%d", name(value()), 1+r.IntN(5))
	case k == 38: // refused: out of range, reversed, step 0
		return []string{strconv.Itoa(hi + 1), fmt.Sprintf("%d-%d", hi, lo), "*/0", "x", "1,,2"}[r.IntN(5)]
	}
	return strconv.Itoa(value())
}

// runCronOracle runs every case in one run of the oracle.
func runCronOracle(t *testing.T, node string, cases []cronCase) []cronOutcome {
	t.Helper()
	stdin, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "oracle.mjs")
	cmd.Dir = cronOracleDir
	cmd.Env = append(os.Environ(), "TZ=UTC", "NO_COLOR=1")
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s/oracle.mjs: %v\n%s", cronOracleDir, err, stderr.Bytes())
	}
	var results []struct {
		Next  *string `json:"next"`
		Error *string `json:"error"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &results); err != nil {
		t.Fatalf("%s/oracle.mjs wrote no JSON array: %v\n%.2000s", cronOracleDir, err, stdout.Bytes())
	}
	if len(results) != len(cases) {
		t.Fatalf("the oracle answered %d cases of %d", len(results), len(cases))
	}
	out := make([]cronOutcome, len(results))
	for i, res := range results {
		switch {
		case res.Error != nil:
			out[i] = cronOutcome{Failed: true, Error: *res.Error}
		case res.Next != nil:
			next, err := time.Parse(time.RFC3339Nano, *res.Next)
			if err != nil {
				t.Fatalf("%s: the oracle's next %q: %v", cases[i].Name, *res.Next, err)
			}
			out[i] = cronOutcome{Next: next.UnixMilli()}
		default:
			t.Fatalf("%s: the oracle answered neither next nor error", cases[i].Name)
		}
	}
	return out
}
