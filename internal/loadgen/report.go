package loadgen

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"
)

// Print writes the report as a table of two columns separated by at least
// two spaces (scripts read a value with awk -F'  +').
func (r *Report) Print(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k string, v any) { fmt.Fprintf(tw, "%s\t%v\n", k, v) }
	row("server", r.URL)
	row("run", fmt.Sprintf("%d subscribers, %d clients and %d probes for %s", r.Subscribers, r.Clients, r.Probes, r.Duration))
	row("triggers sent", r.Sent)
	row("triggers accepted", r.Accepted)
	row("triggers accepted/s", rate(r.TriggersPerSecond))
	row("trigger answer", r.TriggerLatency)
	row("wrong trigger answers", sum(r.TriggerErrors))
	row("messages delivered", fmt.Sprintf("%d of %d", r.Delivered, r.Accepted))
	row("delivered in", seconds(r.DeliveredIn))
	row("delivered messages/s", rate(r.DeliveredPerSecond))
	row("trigger to feed", r.FeedLatency)
	row("wrong probe answers", sum(r.ProbeErrors))
	row("feed clients", fmt.Sprintf("%d for %s", r.FeedClients, r.FeedDuration))
	row("feed reads/s", rate(r.FeedReadsPerSecond))
	row("feed read", r.FeedRead)
	row("wrong feed answers", sum(r.FeedErrors))
	if r.Memory != nil {
		row("server memory", r.Memory)
	}
	row("errors", r.Errors())
	if r.DeliveryError != "" {
		row("  delivery", r.DeliveryError)
	}
	for _, m := range []map[string]int{r.TriggerErrors, r.ProbeErrors, r.CountErrors, r.FeedErrors} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			row("  "+strconv.Itoa(m[k])+" ×", k)
		}
	}
	return tw.Flush()
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func rate(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + " s" }
