// A Novu Framework bridge app: the workflows below served by
// @novu/framework's express adapter at /api/novu, with strict HMAC
// authentication against NOVU_SECRET_KEY. It listens on 127.0.0.1:$PORT
// (0: a free port) and prints {"port": N} once it is ready.
import express from 'express';
import { Client, serve } from '@novu/framework/express';
import { workflow } from '@novu/framework';

// welcome: a payload schema, an in_app step whose controls hold Liquid and
// defaults, then an email that reads the in_app step's state, is skipped
// once the in_app message was read and overrides SendGrid's request
// (categories, ipPoolName, and a header and a query parameter passed through), and an sms skipped by a control.
const welcome = workflow(
  'welcome',
  async ({ step, payload }) => {
    const inbox = await step.inApp(
      'inbox',
      async (controls) => ({
        subject: controls.subject,
        body: controls.body,
        redirect: { url: controls.url, target: '_blank' },
        data: { plan: payload.plan },
      }),
      {
        controlSchema: {
          type: 'object',
          properties: {
            subject: { type: 'string', default: 'Welcome, {{payload.name}}!' },
            body: { type: 'string', default: 'You are on the {{payload.plan}} plan.' },
            url: { type: 'string', default: 'https://example.com/start' },
          },
          additionalProperties: false,
        },
      },
    );
    await step.email(
      'follow-up',
      async () => ({
        subject: `Still there, ${payload.name}?`,
        body: `<p>Your welcome message is ${inbox.read ? 'read' : 'unread'}.</p>`,
      }),
      {
        skip: () => inbox.read === true,
        // A provider override: merged into the SendGrid request of this step.
        providers: {
          sendgrid: () => ({ categories: ['welcome-follow-up'], ipPoolName: 'herald-pool',
            _passthrough: { headers: { 'X-Herald-Bridge': 'welcome' }, query: { source: 'bridge' } } }),
        },
      },
    );
    await step.sms('text', async (controls) => ({ body: controls.text }), {
      controlSchema: {
        type: 'object',
        properties: {
          text: { type: 'string', default: 'Hi {{subscriber.firstName}}' },
          off: { type: 'boolean', default: false },
        },
      },
      skip: (controls) => controls.off,
    });
  },
  {
    name: 'Welcome',
    description: 'Greets a new subscriber',
    tags: ['onboarding'],
    payloadSchema: {
      type: 'object',
      properties: {
        name: { type: 'string' },
        plan: { type: 'string', default: 'free' },
      },
      required: ['name'],
      additionalProperties: false,
    },
  },
);

// digest: a digest window, a delay, then an in_app summary of the events.
const digest = workflow('digest', async ({ step }) => {
  const events = await step.digest('collect', async (controls) => ({ amount: controls.amount, unit: controls.unit }), {
    controlSchema: {
      type: 'object',
      properties: {
        amount: { type: 'number', default: 5 },
        unit: { type: 'string', enum: ['seconds', 'minutes', 'hours', 'days'], default: 'minutes' },
      },
    },
  });
  await step.delay('wait', async () => ({ amount: 2, unit: 'seconds' }));
  await step.inApp('summary', async () => ({ body: `${events.eventCount} events` }));
});

// echo: the payload as the bridge parsed it, any properties allowed (a
// workflow without a payload schema gets one that strips them all).
const echo = workflow(
  'echo',
  async ({ step, payload }) => {
    await step.inApp('echo', async () => ({ body: JSON.stringify(payload) }), { disableOutputSanitization: true });
  },
  { payloadSchema: { type: 'object', additionalProperties: true } },
);

// fails: a step that throws.
const fails = workflow('fails', async ({ step }) => {
  await step.inApp('boom', async () => {
    throw new Error('the step blew up');
  });
});

const app = express();
app.use(express.json({ limit: '2mb' }));
app.use(
  '/api/novu',
  serve({
    workflows: [welcome, digest, echo, fails],
    client: new Client({ secretKey: process.env.NOVU_SECRET_KEY, strictAuthentication: true, verbose: false }),
  }),
);

const server = app.listen(Number(process.env.PORT || 0), '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + '\n');
});
