// The environment and workflow-promotion operations of @novu/api against
// Herald: environments.create/update/delete/getTags/diff/publish and
// workflows.patch/steps.retrieve/steps.generatePreview/sync.
//
// A new environment comes with its own API key (in apiKeys of the creation's
// answer only): the development key creates a workflow and a layout with a
// translation, publishes them into the new environment (the layout's
// translation with it), and the new environment's key triggers the
// workflow and reads the layout and its translation there.
//
// One known gap of the client, not of Herald: @novu/api 3.19.1 types the
// `resourceType` of diff and publish results as REGULAR|ECHO|BRIDGE, while
// the service (and Herald) answer `workflow`; a non-empty diff or publish
// answer therefore fails the client's validation, and this script checks
// the raw answer the error carries. Empty answers parse.
import { Novu } from "@novu/api";

export async function environments({ novu, serverURL, step, check, run }) {
  const workflowId = `promote-${run}`;
  const layoutId = `promote-layout-${run}`;
  const subscriberId = `promote-user-${run}`;

  const env = await step("environments.create", async () => {
    const res = await novu.environments.create({ name: `SDK env ${run}`, color: "#4f46e5" });
    const e = res.result;
    check(/^[0-9a-f]{24}$/.test(e.id ?? ""), "_id", e.id);
    check(e.name === `SDK env ${run}` && e.type === null, "name and type", e);
    check(e.apiKeys?.length === 1 && e.apiKeys[0].key.length > 10, "its API key, shown once", e.apiKeys);
    return e;
  });
  const envKey = env.apiKeys[0].key;
  const other = new Novu({ secretKey: envKey, serverURL });

  await step("environments.update (its own key)", async () => {
    const res = await other.environments.update({ name: `SDK env ${run} renamed`, color: "#000000" }, env.id);
    check(res.result.id === env.id && res.result.name === `SDK env ${run} renamed`, "renamed", res.result);
    check(res.result.apiKeys === undefined, "no key after creation", res.result.apiKeys);
  });

  await step("workflows.create (to promote)", async () => {
    const res = await novu.workflows.create({
      name: `Promote ${run}`, workflowId, tags: ["promote", `run-${run}`], active: true,
      steps: [{ name: "Inbox", type: "in_app", controlValues: { subject: "Hi {{subscriber.firstName}}", body: "Order {{payload.order}}" } }],
    });
    check(res.result.workflowId === workflowId, "workflowId", res.result.workflowId);
  });

  await step("workflows.patch", async () => {
    const res = await novu.workflows.patch({ description: "patched", tags: ["promote", `run-${run}`, "patched"] }, workflowId);
    check(res.result.description === "patched" && res.result.tags.includes("patched"), "patched fields", res.result);
    check(res.result.steps.length === 1 && res.result.active === true, "the rest unchanged", res.result);
  });

  await step("workflows.steps.retrieve", async () => {
    const res = await novu.workflows.steps.retrieve(workflowId, "inbox");
    const s = res.result;
    check(s.stepId === "inbox" && s.type === "in_app", "the step", s);
    check(s.controls.dataSchema?.properties?.body !== undefined, "controls' schema", s.controls);
    check(s.variables.properties.payload.properties.order !== undefined, "payload variables", s.variables);
  });

  await step("workflows.steps.generatePreview", async () => {
    const res = await novu.workflows.steps.generatePreview({
      workflowId, stepId: "inbox",
      generatePreviewRequestDto: { previewPayload: { subscriber: { firstName: "Ada" }, payload: { order: "A-1" } } },
    });
    const r = res.result.result;
    check(r.type === "in_app" && r.preview.subject === "Hi Ada" && r.preview.body === "Order A-1", "rendered", r);
    check(res.result.previewPayloadExample.payload.order === "A-1", "example payload", res.result.previewPayloadExample);
  });

  await step("environments.getTags", async () => {
    const res = await novu.environments.getTags(env.id);
    check(Array.isArray(res.result) && res.result.length === 0, "none in the new environment yet", res.result);
    const dev = await novu.environments.list();
    const devEnv = dev.result.find((e) => e.type === "dev");
    const tags = (await novu.environments.getTags(devEnv.id)).result.map((t) => t.name);
    check(tags.includes("patched") && tags.includes(`run-${run}`), "the development workflows' tags", tags);
  });

  await step("layouts.create + translations.create (to promote)", async () => {
    await novu.layouts.create({ layoutId, name: `Promote layout ${run}`, isTranslationEnabled: true });
    await novu.layouts.update({ name: `Promote layout ${run}`, isTranslationEnabled: true, controlValues: { email: {
      body: "<html><body>{{content}}<footer>{{t.footer}}</footer></body></html>", editorType: "html" } } }, layoutId);
    const t = await novu.translations.create({ resourceId: layoutId, resourceType: "layout", locale: "en_US",
      content: { footer: "See you" } });
    check(t.resourceType === "layout" && t.resourceId === layoutId, "the layout's translation", t);
  });

  // rawOf returns the raw answer of a call whose answer the client cannot
  // parse (the resourceType enum gap), or the parsed one.
  const rawOf = async (fn) => {
    try {
      return (await fn()).result;
    } catch (err) {
      if (err?.rawValue === undefined) throw err;
      const issues = err.cause?.issues ?? err.cause?.errors ?? [];
      const other = issues.filter((i) => i.path?.[i.path.length - 1] !== "resourceType");
      check(issues.length > 0 && other.length === 0, "the only rejection is the resourceType enum", issues);
      return err.rawValue.Result ?? err.rawValue;
    }
  };

  await step("environments.diff (before publishing)", async () => {
    const d = await rawOf(() => novu.environments.diff({}, env.id));
    check(d.targetEnvironmentId === env.id && d.summary?.hasChanges === true, "changes", d.summary);
    const r = d.resources.find((x) => x.sourceResource?.id === workflowId);
    check(r?.resourceType === "workflow" && r.targetResource === null, "the workflow would be added", r);
    const l = d.resources.find((x) => x.resourceType === "layout" && x.sourceResource?.id === layoutId);
    check(l?.targetResource === null, "the layout would be added", l);
    check(l.changes.some((c) => c.resourceType === "localization_group" && c.action === "added"), "with its translations", l.changes);
  });

  await step("environments.publish", async () => {
    const p = await rawOf(() => novu.environments.publish({}, env.id));
    const ok = p.results.flatMap((x) => x.successful);
    check(ok.some((x) => x.resourceId === workflowId && x.action === "created"), "created in the target", p);
    check(ok.some((x) => x.resourceType === "layout" && x.resourceId === layoutId && x.action === "created"), "the layout too", p);
  });

  await step("environments.diff (after publishing: nothing)", async () => {
    const res = await novu.environments.diff({}, env.id);
    check(res.result.resources.length === 0 && res.result.summary.hasChanges === false, "no changes", res.result);
  });

  await step("environments.publish (again: nothing changes)", async () => {
    const res = await novu.environments.publish({}, env.id);
    check(res.result.results.length === 0 && res.result.summary.successful === 0, "nothing published", res.result);
  });

  await step("trigger with the new environment's key", async () => {
    const res = await other.trigger({ workflowId, to: { subscriberId, firstName: "Ada" }, payload: { order: "B-2" } });
    check(res.result.acknowledged === true && res.result.status === "processed", "processed", res.result);
  });

  await step("the published layout and its translation, with the new environment's key", async () => {
    const l = await other.layouts.retrieve(layoutId);
    check(l.result.layoutId === layoutId && l.result.isTranslationEnabled === true, "the layout there", l.result);
    check(l.result.controls.values.email?.body.includes("{{t.footer}}"), "its e-mail body", l.result.controls);
    const t = await other.translations.retrieve({ resourceType: "layout", resourceId: layoutId, locale: "en_US" });
    check(t.content.footer === "See you", "its translation there", t);
  });

  await step("workflows.sync", async () => {
    await novu.workflows.patch({ name: `Promote ${run} v2` }, workflowId);
    const res = await novu.workflows.sync({ targetEnvironmentId: env.id }, workflowId);
    check(res.result.workflowId === workflowId && res.result.name === `Promote ${run} v2`, "the copy in the target", res.result);
    const there = await other.workflows.get(workflowId);
    check(there.result.id === res.result.id, "the target's workflow", there.result);
  });

  await step("environments.delete", async () => {
    await novu.environments.delete(env.id);
    const list = await novu.environments.list();
    check(!list.result.some((e) => e.id === env.id), "gone from the list", list.result);
    let status = 0;
    try {
      await other.environments.list();
    } catch (err) {
      status = err.statusCode;
    }
    check(status === 401, "its key no longer works", status);
  });
}
