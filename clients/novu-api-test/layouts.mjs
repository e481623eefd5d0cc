// The eight layout operations of @novu/api against Herald, and an e-mail
// step that names a layout (usage, and delete removing it from the step).
//
// layouts({ novu, run, step, check }) runs them; run.mjs calls it.
export async function layouts({ novu, run, step, check }) {
  const mainId = `sdk-layout-${run}`;
  const html = "<html><body><h1>{{subscriber.firstName}}</h1>{{content}}</body></html>";

  const before = await step("layouts.list (before)", async () => {
    const res = await novu.layouts.list({ limit: 100 });
    check(Array.isArray(res.result.layouts) && typeof res.result.totalCount === "number", "list shape", res.result);
    return res.result;
  });

  const main = await step("layouts.create", async () => {
    const res = await novu.layouts.create({ layoutId: mainId, name: `SDK layout ${run}`, source: "dashboard" });
    const l = res.result;
    check(l.layoutId === mainId && /^[0-9a-f]{24}$/.test(l.id), "ids", l);
    check(l.isDefault === (before.totalCount === 0), "the first layout of an environment is its default", l.isDefault);
    check(l.origin === "novu-cloud" && l.type === "BRIDGE", "origin and type", l);
    check(JSON.stringify(l.controls.values) === "{}", "no control values yet", l.controls);
    return l;
  });

  const second = await step("layouts.create (second)", async () => {
    const res = await novu.layouts.create({ layoutId: `${mainId}-promo`, name: `SDK promo ${run}`, isTranslationEnabled: true });
    check(res.result.isDefault === false, "one default per environment", res.result.isDefault);
    check(res.result.isTranslationEnabled === true, "isTranslationEnabled", res.result);
    return res.result;
  });

  await step("layouts.update", async () => {
    const res = await novu.layouts.update({ name: `SDK promo ${run} v2`, controlValues: { email: { body: html, editorType: "html" } } },
      second.layoutId);
    check(res.result.name === `SDK promo ${run} v2`, "name", res.result.name);
    check(res.result.controls.values.email?.body === html && res.result.controls.values.email?.editorType === "html",
      "the e-mail body", res.result.controls);
  });

  await step("layouts.update (no content variable: 400)", async () => {
    try {
      await novu.layouts.update({ name: "x", controlValues: { email: { body: "<html><body>hi</body></html>", editorType: "html" } } },
        second.layoutId);
    } catch (err) {
      check(err?.statusCode === 400, "400", err?.statusCode);
      check(String(err?.body ?? err?.message).includes(`should contain the \\"content\\" variable`) ||
        String(err?.message).includes(`should contain the "content" variable`), "message", err?.message);
      return;
    }
    check(false, "refused");
  });

  await step("layouts.retrieve", async () => {
    for (const key of [second.layoutId, second.id]) {
      const res = await novu.layouts.retrieve(key);
      check(res.result.id === second.id && res.result.controls.values.email?.body === html, "by layoutId and _id", res.result);
    }
  });

  await step("layouts.list", async () => {
    const res = await novu.layouts.list({ limit: 10, offset: 0, orderBy: "name", orderDirection: "ASC", query: `sdk promo ${run}` });
    check(res.result.totalCount === 1 && res.result.layouts[0].layoutId === second.layoutId, "search, ignoring case", res.result);
  });

  const copy = await step("layouts.duplicate", async () => {
    const res = await novu.layouts.duplicate({ name: `SDK copy ${run}`, layoutId: `${mainId}-copy` }, second.layoutId);
    check(res.result.layoutId === `${mainId}-copy` && res.result.isDefault === false, "the copy", res.result);
    check(res.result.controls.values.email?.body === html, "the original's control values", res.result.controls);
    return res.result;
  });

  await step("layouts.generatePreview", async () => {
    const res = await novu.layouts.generatePreview({ previewPayload: { subscriber: { firstName: "Alice" } } }, copy.layoutId);
    check(res.result.result.type === "email", "type", res.result.result);
    check(res.result.result.preview?.body?.startsWith("<html><body><h1>Alice</h1>"), "rendered with the preview subscriber",
      res.result.result);
    check(res.result.previewPayloadExample.subscriber?.firstName === "Alice", "the example echoes the subscriber",
      res.result.previewPayloadExample);
    const bad = await novu.layouts.generatePreview({ controlValues: { email: {
      body: "<html><body>{% for i in (1..1000) %}{% for j in (1..1000) %}{% endfor %}{% endfor %}{{content}}</body></html>",
      editorType: "html" } } }, copy.layoutId);
    check(bad.result.result.type === "email" && bad.result.result.preview === undefined, "a failed render has no preview", bad.result);
  });

  const flowId = `sdk-layout-flow-${run}`;
  await step("workflows.create (e-mail step with layoutId)", async () => {
    const res = await novu.workflows.create({
      name: `SDK layout flow ${run}`, workflowId: flowId, active: true,
      steps: [{ name: "Mail", type: "email", controlValues: { subject: "s", body: "<p>b</p>", layoutId: copy.layoutId } }],
    });
    check(res.result.steps[0].controlValues?.layoutId === copy.layoutId, "layoutId kept", res.result.steps[0]);
  });

  await step("layouts.usage", async () => {
    const res = await novu.layouts.usage(copy.layoutId);
    check(res.result.workflows.length === 1 && res.result.workflows[0].workflowId === flowId, "the workflow", res.result);
    const none = await novu.layouts.usage(second.layoutId);
    check(none.result.workflows.length === 0, "unused", none.result);
  });

  await step("layouts.delete", async () => {
    if (main.isDefault) {
      try {
        // The SDK retries a 409 by default (an idempotency conflict): not here.
        await novu.layouts.delete(main.layoutId, undefined, { retries: { strategy: "none" } });
        check(false, "the default layout is kept");
      } catch (err) {
        check(err?.statusCode === 409, "409 for the default", err?.statusCode);
      }
    }
    await novu.layouts.delete(copy.layoutId);
    try {
      await novu.layouts.retrieve(copy.layoutId);
      check(false, "gone");
    } catch (err) {
      check(err?.statusCode === 404, "404 after delete", err?.statusCode);
    }
    const wf = await novu.workflows.get(flowId);
    check(wf.result.steps[0].controlValues?.layoutId === undefined, "the step no longer names it", wf.result.steps[0]);
    await novu.workflows.delete(flowId);
  });
}
