// Workflows as Novu runs them (issue 26) through @novu/api: every step type
// created and read back (step conditions, throttle, HTTP request, v2 delay
// and digest controls), then run: a condition that skips a step, a throttle
// that lets one execution through, an HTTP request the private-network
// guard refuses (the workflow stops), and an invalid condition refused with
// a 422 naming the field. Called by run.mjs with its helpers.
export async function steps({ novu, step, check, run, serverURL, secretKey, sleep, CheckError }) {
  const raw = async (path) => {
    const res = await fetch(`${serverURL}${path}`, { headers: { Authorization: `ApiKey ${secretKey}` } });
    check(res.ok, `GET ${path}`, res.status);
    return res.json();
  };
  // jobsOf waits for a transaction's jobs to be final and returns them.
  const jobsOf = async (transactionId, want) => {
    let jobs = [];
    for (let i = 0; i < 100; i++) {
      const list = await raw(`/v1/notifications?transactionId=${encodeURIComponent(transactionId)}`);
      if (list.data.length === 1) {
        jobs = (await raw(`/v1/notifications/${list.data[0]._id}`)).jobs;
        if (jobs.map((j) => j.status).join(",") === want.join(",")) return jobs;
      }
      await sleep(100);
    }
    throw new CheckError(`jobs of ${transactionId}: want ${want.join(",")}, got ${jobs.map((j) => j.status).join(",")}`);
  };

  const allId = `sdk-steps-${run}`;
  const isVip = { "==": [{ var: "payload.vip" }, true] };
  const unread = { "==": [{ var: "steps.inbox.read" }, false] };
  await step("workflows.create with every step type", async () => {
    const res = await novu.workflows.create({
      name: `SDK steps ${run}`, workflowId: allId, active: true,
      steps: [
        { name: "inbox", type: "in_app", controlValues: { body: "Order {{payload.id}}", skip: isVip } },
        { name: "wait", type: "delay", controlValues: { type: "regular", amount: 1, unit: "hours" } },
        { name: "mail", type: "email", controlValues: { subject: "Unread", body: "<p>Look</p>", skip: unread } },
        { name: "limit", type: "throttle", controlValues: { type: "fixed", amount: 1, unit: "hours", threshold: 3,
          throttleKey: "{{payload.orderId}}" } },
        { name: "crm", type: "http_request", controlValues: { method: "POST", url: "https://crm.example.com/o/{{payload.id}}",
          headers: [{ key: "X-Plan", value: "{{subscriber.data.plan}}" }], body: '{"id":"{{payload.id}}"}',
          responseBodySchema: { type: "object", required: ["tier"] }, enforceSchemaValidation: true, continueOnFailure: false } },
        { name: "vip", type: "sms", controlValues: { body: "Hi", skip: { "==": [{ var: "steps.crm.tier" }, "gold"] } } },
        { name: "batch", type: "digest", controlValues: { amount: 10, unit: "minutes", lookBackWindow: { amount: 5, unit: "minutes" } } },
        { name: "daily", type: "digest", controlValues: { cron: "0 9 * * *", digestKey: "projectId" } },
        { name: "monday", type: "delay", controlValues: { type: "timed", cron: "0 9 * * 1" } },
      ],
    });
    const wf = res.result;
    check(wf.steps.map((s) => s.type).join(",") === "in_app,delay,email,throttle,http_request,sms,digest,digest,delay",
      "step types", wf.steps.map((s) => s.type));
    return wf;
  });

  await step("workflows.get and steps.retrieve read every control back", async () => {
    const wf = (await novu.workflows.get(allId)).result;
    const byId = Object.fromEntries(wf.steps.map((s) => [s.stepId, s.controlValues]));
    check(JSON.stringify(byId.inbox.skip) === JSON.stringify(isVip), "in_app skip", byId.inbox.skip);
    check(JSON.stringify(byId.mail.skip) === JSON.stringify(unread), "email skip", byId.mail.skip);
    check(byId.limit.threshold === 3 && byId.limit.throttleKey === "{{payload.orderId}}" && byId.limit.type === "fixed",
      "throttle controls", byId.limit);
    check(byId.crm.method === "POST" && byId.crm.headers?.[0]?.key === "X-Plan" && byId.crm.enforceSchemaValidation === true,
      "http_request controls", byId.crm);
    check(byId.batch.lookBackWindow?.amount === 5 && byId.daily.cron === "0 9 * * *", "digest controls", [byId.batch, byId.daily]);
    check(byId.monday.type === "timed" && byId.monday.cron === "0 9 * * 1", "timed delay", byId.monday);
    for (const id of ["limit", "crm"]) {
      const s = (await novu.workflows.steps.retrieve(allId, id)).result;
      check(s.stepId === id, `steps.retrieve ${id}`, s.stepId);
    }
  });

  await step("workflows.create refuses an unknown condition operation (422 naming the field)", async () => {
    try {
      await novu.workflows.create({ name: `SDK bad ${run}`, workflowId: `sdk-bad-${run}`,
        steps: [{ name: "inbox", type: "in_app", controlValues: { body: "x", skip: { frobnicate: [1] } } }] },
        undefined, { retries: { strategy: "none" } });
      throw new CheckError("an unknown operation was accepted");
    } catch (err) {
      if (err instanceof CheckError) throw err;
      check(err?.statusCode === 422 && /steps\.0\.controlValues\.skip/.test(JSON.stringify(err?.body ?? err?.data$ ?? "")),
        "422 naming steps.0.controlValues.skip", err?.body);
    }
  });

  const subscriberId = `sdk-steps-user-${run}`;
  await novu.subscribers.create({ subscriberId, firstName: "Cond", data: { plan: "pro" } });

  const condId = `sdk-cond-${run}`;
  await step("a step condition decides (trigger; skipped job; the feed)", async () => {
    await novu.workflows.create({ name: `SDK cond ${run}`, workflowId: condId, active: true,
      steps: [{ name: "inbox", type: "in_app", controlValues: { body: "vip only", skip: isVip } }] });
    await novu.trigger({ workflowId: condId, to: subscriberId, payload: { vip: false }, transactionId: `${condId}-no` });
    await novu.trigger({ workflowId: condId, to: subscriberId, payload: { vip: true }, transactionId: `${condId}-yes` });
    const no = await jobsOf(`${condId}-no`, ["skipped"]);
    check(no[0].executionDetails.some((d) => d.detail === "Step skipped: its conditions are not met"), "the skip detail",
      no[0].executionDetails);
    await jobsOf(`${condId}-yes`, ["completed"]);
    const feed = (await novu.subscribers.notifications.list({ subscriberId })).result.data;
    check(feed.length === 1 && feed[0].body === "vip only", "one message: the VIP one", feed.map((n) => n.body));
  });

  const throttleId = `sdk-throttle-${run}`;
  await step("a throttle lets the first execution of its window through", async () => {
    await novu.workflows.create({ name: `SDK throttle ${run}`, workflowId: throttleId, active: true,
      steps: [
        { name: "limit", type: "throttle", controlValues: { amount: 1, unit: "hours", threshold: 1 } },
        { name: "inbox", type: "in_app", controlValues: { body: "throttled {{steps.limit.executionCount}}" } },
      ] });
    await novu.trigger({ workflowId: throttleId, to: subscriberId, transactionId: `${throttleId}-1` });
    await jobsOf(`${throttleId}-1`, ["completed", "completed"]);
    await novu.trigger({ workflowId: throttleId, to: subscriberId, transactionId: `${throttleId}-2` });
    const jobs = await jobsOf(`${throttleId}-2`, ["skipped", "skipped"]);
    check(jobs[0].executionDetails.some((d) => d.detail === "Throttle limit exceeded"), "Novu's throttle detail",
      jobs[0].executionDetails);
  });

  const nudgeId = `sdk-nudge-${run}`;
  await step("in-app, delay, then an e-mail only if the in-app message was not read", async () => {
    await novu.workflows.create({ name: `SDK nudge ${run}`, workflowId: nudgeId, active: true,
      steps: [
        { name: "inbox", type: "in_app", controlValues: { body: "You have an order" } },
        { name: "wait", type: "delay", controlValues: { type: "regular", amount: 2, unit: "seconds" } },
        { name: "mail", type: "email", controlValues: { subject: "Unread", body: "<p>Look</p>", skip: unread } },
      ] });
    const reader = `${nudgeId}-reader`;
    const ignorer = `${nudgeId}-ignorer`;
    for (const s of [reader, ignorer]) await novu.subscribers.create({ subscriberId: s, email: `${s}@example.com` });
    await novu.trigger({ workflowId: nudgeId, to: reader, transactionId: `${nudgeId}-r` });
    await novu.trigger({ workflowId: nudgeId, to: ignorer, transactionId: `${nudgeId}-i` });
    let feed = [];
    for (let i = 0; i < 50 && feed.length === 0; i++) {
      feed = (await novu.subscribers.notifications.list({ subscriberId: reader })).result.data;
      if (feed.length === 0) await sleep(50);
    }
    check(feed.length === 1, "the reader's in-app message", feed.length);
    await novu.subscribers.messages.markAllAs({ messageId: feed[0].id, markAs: "read" }, reader);
    const read = await jobsOf(`${nudgeId}-r`, ["completed", "completed", "skipped"]);
    check(read[2].executionDetails.some((d) => d.detail === "Step skipped: its conditions are not met"),
      "read in time: the e-mail step skipped", read[2].executionDetails);
    const unreadJobs = await jobsOf(`${nudgeId}-i`, ["completed", "completed", "failed"]);
    check(!unreadJobs[2].executionDetails.some((d) => /conditions are not met/.test(d.detail)),
      "not read: the e-mail step ran (no e-mail integration here, so it fails at the provider)", unreadJobs[2].executionDetails);
  });

  const httpId = `sdk-http-${run}`;
  await step("an HTTP request to a private address is refused and the workflow stops", async () => {
    await novu.workflows.create({ name: `SDK http ${run}`, workflowId: httpId, active: true,
      steps: [
        { name: "call", type: "http_request", controlValues: { method: "GET", url: "http://127.0.0.1:9/hook" } },
        { name: "inbox", type: "in_app", controlValues: { body: "never" } },
      ] });
    await novu.trigger({ workflowId: httpId, to: subscriberId, transactionId: `${httpId}-1` });
    const jobs = await jobsOf(`${httpId}-1`, ["failed", "canceled"]);
    check(jobs[0].executionDetails.some((d) => d.status === "Failed" && /private-network guard/.test(d.detail)),
      "the guard's refusal", jobs[0].executionDetails);
  });
}
