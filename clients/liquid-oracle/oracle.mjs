// Renders step controls as Novu does, for Herald's differential Liquid test
// (internal/sandbox/difftest_test.go).
//
// stdin:  [{"name": "...", "controls": {...}, "context": {...}}, ...]
// stdout: [{"name": "...", "ok": true, "result": {...}} |
//          {"name": "...", "ok": false, "error": "..."}, ...]
//
// The pipeline is that of @novu/framework's Client.compileControls (less its
// translation markers and its parsing of control strings that hold JSON): the
// whole controls object, JSON-encoded, is ONE Liquid template; its output is
// repaired with jsonrepair and parsed back. Run it with TZ=UTC.
import { createLiquidEngine } from '@novu/framework/internal';
import { jsonrepair } from 'jsonrepair';

const engine = createLiquidEngine();

async function render(controls, context) {
  const src = JSON.stringify(controls);
  const tpl = engine.parse(src);
  const out = await engine.render(tpl, context);
  return JSON.parse(jsonrepair(out));
}

function message(err) {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

const cases = JSON.parse(await readStdin());
if (!Array.isArray(cases)) throw new Error('stdin must hold a JSON array of cases');

const results = [];
for (const c of cases) {
  try {
    results.push({ name: c.name, ok: true, result: await render(c.controls, c.context) });
  } catch (err) {
    results.push({ name: c.name, ok: false, error: message(err) });
  }
}
process.stdout.write(JSON.stringify(results));
