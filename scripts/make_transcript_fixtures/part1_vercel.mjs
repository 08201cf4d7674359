// Vercel AI SDK UIMessage fixtures, written by the real `ai` package (offline: a mock model
// from `ai/test` streams scripted parts; tools run locally).
//
//   npm install ai zod            (in a scratch folder SCRATCH outside this repository)
//   cp part1_vercel.mjs SCRATCH/ && cd SCRATCH && node part1_vercel.mjs OUT_DIR
// (node resolves `ai` next to the script, so it runs from the scratch folder)
//
// For each scenario: streamText with tools -> toUIMessageStream -> readUIMessageStream, the
// path a useChat app takes; the last UIMessage snapshot is what such an app persists. The
// history saved is [user message, assistant message]. Scenarios:
//   vercel_ui_complete.json     a tool call, its result, the answer (two steps)
//   vercel_ui_interrupted.json  the request aborted while the tool ran: part left input-available
//   vercel_ui_tool_error.json   the tool threw: output-error (a result, not broken)
//   vercel_ui_approval.json     a tool that needs approval: approval-requested (pending a person)
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { readUIMessageStream, stepCountIs, streamText, tool, toUIMessageStream } from 'ai';
import { MockLanguageModelV4, simulateReadableStream } from 'ai/test';
import { z } from 'zod';

const out = process.argv[2];
if (!out) throw new Error('usage: node part1_vercel.mjs OUT_DIR');

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};
const finish = (unified) => ({ type: 'finish', finishReason: { unified, raw: unified }, usage });

function toolStep(id, city) {
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'reasoning-start', id: 'r1' },
    { type: 'reasoning-delta', id: 'r1', delta: 'The user wants the weather; call the tool.' },
    { type: 'reasoning-end', id: 'r1', providerMetadata: { anthropic: { signature: 'sig-fixture-0001' } } },
    { type: 'text-start', id: 't1' },
    { type: 'text-delta', id: 't1', delta: 'Let me check.' },
    { type: 'text-end', id: 't1' },
    { type: 'tool-call', toolCallId: id, toolName: 'getWeather', input: JSON.stringify({ city }) },
    finish('tool-calls'),
  ];
}
const answerStep = [
  { type: 'stream-start', warnings: [] },
  { type: 'text-start', id: 't2' },
  { type: 'text-delta', id: 't2', delta: 'It is 18 C and clear in Paris.' },
  { type: 'text-end', id: 't2' },
  finish('stop'),
];

function model(steps) {
  let n = 0;
  return new MockLanguageModelV4({
    doStream: async () => ({ stream: simulateReadableStream({ chunks: steps[Math.min(n++, steps.length - 1)] }) }),
  });
}

async function run(name, { execute, needsApproval = false, abortAfterMs }) {
  const controller = new AbortController();
  const getWeather = tool({
    description: 'Current weather for a city',
    inputSchema: z.object({ city: z.string() }),
    needsApproval,
    execute: async (input, options) => execute(input, options, controller),
  });
  const user = { id: 'msg-user-1', role: 'user', parts: [{ type: 'text', text: 'Weather in Paris?' }] };
  const result = streamText({
    model: model([toolStep(`call-${name}-1`, 'Paris'), answerStep]),
    messages: [{ role: 'user', content: 'Weather in Paris?' }],
    tools: { getWeather },
    stopWhen: stepCountIs(3),
    abortSignal: controller.signal,
  });
  let last;
  try {
    for await (const msg of readUIMessageStream({
      stream: toUIMessageStream({ stream: result.stream, generateMessageId: () => 'msg-assistant-1' }),
      terminateOnError: false,
      onError: () => {},
    })) {
      last = structuredClone(msg);
    }
  } catch (err) {
    // an aborted request ends the stream with an error: keep the last snapshot, as an app does
    if (err?.name !== 'AbortError') console.error(`${name}: ${err}`);
  }
  const file = join(out, `vercel_ui_${name}.json`);
  writeFileSync(file, JSON.stringify([user, last], null, 2) + '\n');
  console.log(`wrote ${file}: ${last.parts.map((p) => p.state ? `${p.type}:${p.state}` : p.type).join(', ')}`);
}

await run('complete', { execute: async ({ city }) => ({ city, temperature: 18, sky: 'clear' }) });
await run('tool_error', {
  execute: async () => {
    throw new Error('weather service unavailable');
  },
});
await run('interrupted', {
  execute: (_input, { abortSignal }, controller) =>
    new Promise((_resolve, reject) => {
      abortSignal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
      setTimeout(() => controller.abort(), 20);
    }),
});
await run('approval', { needsApproval: true, execute: async () => ({ temperature: 18 }) });

const require = createRequire(join(process.cwd(), 'package.json'));
const aiVersion = JSON.parse(readFileSync(require.resolve('ai/package.json'), 'utf8')).version;
const versionsPath = join(out, 'VERSIONS.json');
let versions = {};
try {
  versions = JSON.parse(readFileSync(versionsPath, 'utf8'));
} catch {}
for (const name of ['complete', 'tool_error', 'interrupted', 'approval']) {
  versions[`vercel_ui_${name}.json`] = {
    written_by: `npm ai ${aiVersion} (node ${process.version}) streamText + toUIMessageStream + readUIMessageStream, MockLanguageModelV4`,
    script: 'scripts/make_transcript_fixtures/part1_vercel.mjs',
  };
}
const sorted = Object.fromEntries(Object.entries(versions).sort(([a], [b]) => a.localeCompare(b)));
writeFileSync(versionsPath, JSON.stringify(sorted, null, 2) + '\n');
