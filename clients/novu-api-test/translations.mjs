// The translations operations of @novu/api (all nine), and {{t.key}}
// rendered in the subscriber's locale with the default locale's text as the
// fallback. run.mjs calls translations(...) with its helpers.
export async function translations({ novu, step, check, run, sleep, CheckError }) {
  const workflowId = `sdk-i18n-${run}`;
  const other = `sdk-i18n-other-${run}`;
  const enc = (v) => new TextEncoder().encode(JSON.stringify(v));

  await step("translations: a workflow with {{t.key}}", async () => {
    await novu.workflows.create({
      name: `SDK i18n ${run}`, workflowId, active: true,
      steps: [{ name: "Inbox", type: "in_app", controlValues: { subject: "{{t.greeting.subject}}", body: "{{t.greeting.body}}" } }],
    });
    await novu.workflows.create({ name: `SDK i18n other ${run}`, workflowId: other, active: true,
      steps: [{ name: "Inbox", type: "in_app", controlValues: { body: "x" } }] });
  });

  await step("translations.create", async () => {
    const t = await novu.translations.create({ resourceId: workflowId, resourceType: "workflow", locale: "en_US",
      content: { greeting: { subject: "Welcome", body: "Hello {{subscriber.firstName}}" } } });
    check(t.resourceId === workflowId && t.resourceType === "workflow" && t.locale === "en_US", "the translation", t);
    check(t.content.greeting.subject === "Welcome", "content", t.content);
  });

  await step("translations.upload", async () => {
    const r = await novu.translations.upload({ resourceId: workflowId, resourceType: "workflow", files: [
      { fileName: "fr_FR.json", content: enc({ greeting: { subject: "Bienvenue", body: "Bonjour {{subscriber.firstName | upcase}}" } }) },
      { fileName: "es_ES.json", content: new TextEncoder().encode("{not json") },
    ] });
    check(r.totalFiles === 2 && r.successfulUploads === 1 && r.failedUploads === 1, "counts", r);
    check(r.errors.length === 1 && r.errors[0].includes("es_ES.json"), "the failed file is named", r.errors);
  });

  await step("translations.retrieve", async () => {
    const t = await novu.translations.retrieve({ resourceType: "workflow", resourceId: workflowId, locale: "fr_FR" });
    check(t.locale === "fr_FR" && t.content.greeting.subject === "Bienvenue", "the French translation", t);
    try {
      await novu.translations.retrieve({ resourceType: "workflow", resourceId: workflowId, locale: "es_ES" });
      throw new CheckError("a failed upload created a translation");
    } catch (err) {
      if (err instanceof CheckError) throw err;
      check(err?.statusCode === 404, "es_ES is a 404", err?.statusCode);
    }
  });

  await step("translations.groups.retrieve", async () => {
    const g = await novu.translations.groups.retrieve("workflow", workflowId);
    check(g.resourceId === workflowId && g.resourceName === `SDK i18n ${run}`, "the group", g);
    check(JSON.stringify(g.locales) === JSON.stringify(["en_US", "fr_FR"]), "locales", g.locales);
  });

  await step("trigger: {{t.key}} in the subscriber's locale, else the default locale", async () => {
    const fr = `sdk-i18n-fr-${run}`, de = `sdk-i18n-de-${run}`;
    await novu.subscribers.create({ subscriberId: fr, firstName: "Amélie", locale: "fr_FR" });
    await novu.subscribers.create({ subscriberId: de, firstName: "Hans", locale: "de_DE" });
    await novu.trigger({ workflowId, to: fr });
    await novu.trigger({ workflowId, to: de });
    const first = async (subscriberId) => {
      for (let i = 0; i < 100; i++) {
        const r = (await novu.subscribers.notifications.list({ subscriberId })).result;
        if (r.data.length > 0) return r.data[0];
        await sleep(100);
      }
      throw new CheckError(`no notification for ${subscriberId}`);
    };
    const n1 = await first(fr);
    check(n1.subject === "Bienvenue" && n1.body === "Bonjour AMÉLIE", "French", n1);
    const n2 = await first(de);
    check(n2.subject === "Welcome" && n2.body === "Hello Hans", "the default locale (en_US)", n2);
  });

  await step("translations.master.import", async () => {
    const r = await novu.translations.master.import({ locale: "it_IT", masterJson: {
      workflows: { [workflowId]: { greeting: { subject: "Benvenuto" } }, [`ghost-${run}`]: {} } } });
    check(r.success === true && r.message.startsWith("Partial import"), "partial", r);
    check(JSON.stringify(r.successful) === JSON.stringify([workflowId]), "successful", r);
    check(JSON.stringify(r.failed) === JSON.stringify([`ghost-${run}`]), "failed", r);
  });

  await step("translations.master.upload", async () => {
    const r = await novu.translations.master.upload({ file: { fileName: "pt_BR.json",
      content: enc({ workflows: { [other]: { x: "Olá" } } }) } });
    check(r.success === true && JSON.stringify(r.successful) === JSON.stringify([other]), "imported", r);
    check(r.failed === undefined, "no failures", r);
  });

  await step("translations.master.retrieve", async () => {
    const it = await novu.translations.master.retrieve("it_IT");
    check(it.workflows[workflowId]?.greeting?.subject === "Benvenuto", "it_IT", it);
    const pt = await novu.translations.master.retrieve("pt_BR");
    check(pt.workflows[other]?.x === "Olá" && pt.workflows[workflowId] === undefined, "pt_BR", pt);
    check(JSON.stringify(pt.layouts) === "{}", "no layouts", pt.layouts);
    const def = await novu.translations.master.retrieve();
    check(def.workflows[workflowId]?.greeting?.subject === "Welcome", "the default locale", def);
  });

  await step("translations.delete", async () => {
    await novu.translations.delete({ resourceType: "workflow", resourceId: workflowId, locale: "it_IT" });
    const g = await novu.translations.groups.retrieve("workflow", workflowId);
    check(JSON.stringify(g.locales) === JSON.stringify(["en_US", "fr_FR"]), "it_IT deleted", g.locales);
  });

  await step("translations.groups.delete", async () => {
    await novu.translations.groups.delete("workflow", workflowId);
    try {
      await novu.translations.groups.retrieve("workflow", workflowId);
      throw new CheckError("the group is still there");
    } catch (err) {
      if (err instanceof CheckError) throw err;
      check(err?.statusCode === 404, "a 404 after the delete", err?.statusCode);
    }
  });
}
