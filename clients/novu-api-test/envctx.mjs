// Environment variables (6 operations) and contexts (5 operations) through
// @novu/api, and a trigger whose in-app message renders {{env.KEY}} and
// {{context.tenant.data.name}}. Called by run.mjs with its helpers.
export async function envctx({ novu, step, check, run, serverURL, secretKey, sleep, CheckError }) {
  const me = await (await fetch(`${serverURL}/v1/environments/me`, { headers: { Authorization: `ApiKey ${secretKey}` } })).json();
  const envId = me._id;
  const key = `SDK_URL_${run.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
  const secretKeyName = `SDK_SECRET_${run.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
  // The client retries a 409 by default: a conflict is checked without retries.
  const noRetries = { retries: { strategy: "none" } };
  const expectStatus = async (what, status, fn) => {
    try {
      await fn();
      throw new CheckError(`${what} succeeded`);
    } catch (err) {
      if (err instanceof CheckError) throw err;
      check(err?.statusCode === status, `${what} is a ${status}`, err?.statusCode);
    }
  };

  await step("environmentVariables.create", async () => {
    const res = await novu.environmentVariables.create({ key, values: [{ environmentId: envId, value: "https://sdk.example" }] });
    const v = res.result;
    check(v.key === key && v.type === "string" && v.isSecret === false, "fields", v);
    check(/^[0-9a-f]{24}$/.test(v.id) && /^[0-9a-f]{24}$/.test(v.organizationId), "ids", v);
    check(v.values.length === 1 && v.values[0].environmentId === envId && v.values[0].value === "https://sdk.example", "values", v.values);
    const s = (await novu.environmentVariables.create({ key: secretKeyName, isSecret: true,
      values: [{ environmentId: envId, value: "hunter2" }] })).result;
    check(s.isSecret && s.values[0].value === "••••••••", "a secret is masked", s.values);
    await expectStatus("a second create of the key", 409, () => novu.environmentVariables.create({ key }, undefined, noRetries));
  });

  await step("environmentVariables.list / retrieve", async () => {
    const list = (await novu.environmentVariables.list(key.toLowerCase())).result;
    check(list.length === 1 && list[0].key === key, "search is case-insensitive", list.map((v) => v.key));
    const v = (await novu.environmentVariables.retrieve(key)).result;
    check(v.key === key, "retrieve", v);
    await expectStatus("an unknown key", 404, () => novu.environmentVariables.retrieve(`${key}_NOPE`));
  });

  await step("environmentVariables.update", async () => {
    const v = (await novu.environmentVariables.update({ values: [{ environmentId: envId, value: "https://sdk2.example" }] }, key)).result;
    check(v.values[0].value === "https://sdk2.example", "values merged", v.values);
    await expectStatus("the mask as a value", 400, () => novu.environmentVariables.update(
      { values: [{ environmentId: envId, value: "••••••••" }] }, secretKeyName));
  });

  const ctxType = "tenant";
  const ctxId = `sdk-${run}`.toLowerCase();
  await step("contexts.create / retrieve / list", async () => {
    const c = (await novu.contexts.create({ type: ctxType, id: ctxId, data: { name: "Acme SDK" } })).result;
    check(c.type === ctxType && c.id === ctxId && c.data.name === "Acme SDK", "created", c);
    const got = (await novu.contexts.retrieve(ctxId, ctxType)).result;
    check(got.data.name === "Acme SDK", "retrieved", got);
    const page = (await novu.contexts.list({ search: ctxId, limit: 10 })).result;
    check(page.data.length === 1 && page.totalCount === 1 && page.previous === null, "listed", page);
    await expectStatus("a second create", 409, () => novu.contexts.create({ type: ctxType, id: ctxId }, undefined, noRetries));
  });

  await step("contexts.update", async () => {
    const c = (await novu.contexts.update({ id: ctxId, type: ctxType, updateContextRequestDto: { data: { name: "Acme Renamed" } } })).result;
    check(JSON.stringify(c.data) === JSON.stringify({ name: "Acme Renamed" }), "data replaced", c.data);
  });

  const workflowId = `sdk-envctx-${run}`;
  await step("trigger with context renders env and context", async () => {
    await novu.workflows.create({
      name: `SDK envctx ${run}`, workflowId, active: true,
      steps: [{ name: "Inbox", type: "in_app", controlValues: {
        body: `{{env.${key}}} for {{context.tenant.data.name}} ({{context.tenant.id}}) {{env.${secretKeyName}}}`,
      } }],
    });
    const subscriberId = `sdk-envctx-${run}`;
    await novu.subscribers.create({ subscriberId, firstName: "Ctx" });
    await novu.trigger({ workflowId, to: subscriberId, context: { [ctxType]: ctxId } });
    let data = [];
    for (let i = 0; i < 100 && data.length === 0; i++) {
      data = (await novu.subscribers.notifications.list({ subscriberId })).result.data;
      if (data.length === 0) await sleep(100);
    }
    check(data.length === 1, "one notification", data);
    check(data[0].body === `https://sdk2.example for Acme Renamed (${ctxId}) hunter2`, "rendered", data[0].body);
  });

  await step("environmentVariables.usage", async () => {
    const u = (await novu.environmentVariables.usage(key)).result;
    check(u.workflows.length === 1 && u.workflows[0].workflowId === workflowId, "the workflow that names it", u);
  });

  await step("environmentVariables.delete / contexts.delete", async () => {
    await novu.environmentVariables.delete(key);
    await novu.environmentVariables.delete(secretKeyName);
    await expectStatus("a deleted key", 404, () => novu.environmentVariables.retrieve(key));
    await novu.contexts.delete(ctxId, ctxType);
    await expectStatus("a deleted context", 404, () => novu.contexts.retrieve(ctxId, ctxType));
  });
}
