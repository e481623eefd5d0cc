// The oracle of Herald's differential cron test: cron-parser 4.9.0 (luxon
// 3.3.0), called as Novu's add-job usecase calls it —
// parseExpression(cron, { currentDate, tz }).next().
//
// stdin: a JSON array of {expr, from, tz} (from an ISO instant, tz an IANA
// name); stdout: a JSON array of {next} (an ISO instant) or {error}.
import cronParser from 'cron-parser';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const cases = JSON.parse(Buffer.concat(chunks).toString('utf8'));

const results = cases.map(({ expr, from, tz }) => {
  try {
    const interval = cronParser.parseExpression(expr, { currentDate: new Date(from), tz: tz || undefined });
    return { next: interval.next().toDate().toISOString() };
  } catch (err) {
    return { error: String(err && err.message ? err.message : err) };
  }
});
process.stdout.write(JSON.stringify(results));
