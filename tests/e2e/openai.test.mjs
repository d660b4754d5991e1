// End-to-end: the official `openai` npm client (pinned in package-lock.json) drives a real
// `edgeinfer serve` started here on a free loopback port, with stories260K and a synthetic model.
// Needs EDGEINFER_BIN (the edgeinfer binary) and EDGEINFER_DATA (reference data); ctest sets both.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';

const BIN = process.env.EDGEINFER_BIN;
const DATA = process.env.EDGEINFER_DATA;
const API_KEY = 'sk-e2e-test';

assert.ok(BIN, 'EDGEINFER_BIN must name the edgeinfer binary');
assert.ok(DATA, 'EDGEINFER_DATA must name the reference data folder');

// Starts `edgeinfer serve` on port 0 and resolves once it prints its port and /health is 200.
async function startServer(model, extra = []) {
  const child = spawn(BIN, ['serve', '-m', `${DATA}/models/${model}`, '--host', '127.0.0.1', '--port', '0',
                            '-t', '1', '--api-key', API_KEY, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const port = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), 30000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on http:\/\/[^:]+:(\d+)/);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited ${code}: ${stderr}`)); });
  });
  for (let i = 0; i < 300; ++i) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/health`);
      if (r.status === 200) break;
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 50));
  }
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, port, exited, stderr: () => stderr };
}

async function stopServer(s) {
  s.child.kill('SIGTERM');
  const { code, signal } = await s.exited;
  assert.equal(signal, null, `server died of ${signal}: ${s.stderr()}`);
  assert.equal(code, 0, `server exit code ${code}: ${s.stderr()}`);
}

function client(port, apiKey = API_KEY) {
  return new OpenAI({ apiKey, baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0, timeout: 60000 });
}

function checkUsage(usage, maxCompletion) {
  assert.ok(usage, 'usage present');
  assert.ok(usage.prompt_tokens > 0);
  assert.ok(usage.completion_tokens >= 1 && usage.completion_tokens <= maxCompletion);
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
}

const reference = JSON.parse(readFileSync(`${DATA}/ref/stories260K.json`, 'utf8'));

describe('stories260K through the openai client', () => {
  let srv;
  let openai;
  before(async () => { srv = await startServer('stories260K.gguf'); openai = client(srv.port); });
  after(async () => { await stopServer(srv); });

  test('models.list names the served model', async () => {
    const ids = [];
    for await (const m of openai.models.list()) ids.push(m.id);
    assert.deepEqual(ids, ['stories260K']);
  });

  test('greedy completions equal llama.cpp reference continuations', async () => {
    for (const g of reference.greedy48) {
      const r = await openai.completions.create({ model: 'stories260K', prompt: g.prompt, max_tokens: 48, temperature: 0 });
      assert.equal(r.object, 'text_completion');
      assert.equal(r.choices[0].text, g.text);
      assert.equal(r.choices[0].finish_reason, 'length');
      assert.equal(r.usage.prompt_tokens, g.prompt_tokens.length);
      assert.equal(r.usage.completion_tokens, 48);
      assert.ok(r.timings.predicted_ms >= 0 && r.timings.prompt_ms >= 0 && r.timings.queue_ms >= 0);
    }
  });

  test('chat, streamed and not, gives the same greedy text and usage', async () => {
    const messages = [{ role: 'system', content: 'You tell stories.' }, { role: 'user', content: 'Once upon a time' }];
    const whole = await openai.chat.completions.create({ model: 'stories260K', messages, max_tokens: 40, temperature: 0 });
    assert.equal(whole.object, 'chat.completion');
    const content = whole.choices[0].message.content;
    assert.equal(whole.choices[0].message.role, 'assistant');
    assert.equal(typeof content, 'string');
    assert.ok(content.length > 0);
    assert.match(content, /[a-z]/);
    assert.ok(['stop', 'length'].includes(whole.choices[0].finish_reason));
    checkUsage(whole.usage, 40);

    const stream = await openai.chat.completions.create({ model: 'stories260K', messages, max_tokens: 40, temperature: 0,
                                                          stream: true, stream_options: { include_usage: true } });
    let text = '';
    let finish = null;
    let usage = null;
    let chunks = 0;
    for await (const chunk of stream) {
      ++chunks;
      assert.equal(chunk.object, 'chat.completion.chunk');
      if (chunk.usage && chunk.choices.length === 0) usage = chunk.usage;
      for (const c of chunk.choices) {
        if (c.delta?.content) text += c.delta.content;
        if (c.finish_reason) finish = c.finish_reason;
      }
    }
    assert.ok(chunks > 3);
    assert.equal(text, content);
    assert.equal(finish, whole.choices[0].finish_reason);
    assert.deepEqual({ p: usage.prompt_tokens, c: usage.completion_tokens },
                     { p: whole.usage.prompt_tokens, c: whole.usage.completion_tokens });
  });

  test('streamed completions', async () => {
    const g = reference.greedy48[1];
    const stream = await openai.completions.create({ model: 'stories260K', prompt: g.prompt, max_tokens: 48,
                                                     temperature: 0, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage = null;
    for await (const chunk of stream) {
      for (const c of chunk.choices) text += c.text;
      if (chunk.usage && chunk.choices.length === 0) usage = chunk.usage;
    }
    assert.equal(text, g.text);
    assert.equal(usage.completion_tokens, 48);
  });

  test('errors arrive as the SDK error classes with OpenAI fields', async () => {
    await assert.rejects(
      openai.chat.completions.create({ model: 'stories260K', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5000 }),
      (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && e.param === 'max_tokens' &&
             e.code === 'context_length_exceeded');
    await assert.rejects(
      openai.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }),
      (e) => e instanceof OpenAI.NotFoundError && e.code === 'model_not_found');
    await assert.rejects(
      client(srv.port, 'sk-wrong').models.list(),
      (e) => e instanceof OpenAI.AuthenticationError && e.status === 401 && e.code === 'invalid_api_key');
  });
});

describe('a synthetic model (synth-qwen2-q8_0) through the openai client', () => {
  let srv;
  let openai;
  before(async () => { srv = await startServer('synth-qwen2-q8_0.gguf', ['--alias', 'synth']); openai = client(srv.port); });
  after(async () => { await stopServer(srv); });

  test('chat and completions, streamed and not', async () => {
    const messages = [{ role: 'user', content: 'Tell me a story about a cat.' }];
    const whole = await openai.chat.completions.create({ model: 'synth', messages, max_tokens: 12, temperature: 0 });
    assert.equal(typeof whole.choices[0].message.content, 'string');
    checkUsage(whole.usage, 12);
    const stream = await openai.chat.completions.create({ model: 'synth', messages, max_tokens: 12, temperature: 0,
                                                          stream: true });
    let text = '';
    for await (const chunk of stream) for (const c of chunk.choices) text += c.delta?.content ?? '';
    assert.equal(text, whole.choices[0].message.content);

    const c = await openai.completions.create({ model: 'synth', prompt: 'Once upon a time', max_tokens: 16,
                                               temperature: 0.7, seed: 11 });
    checkUsage(c.usage, 16);
    const again = await openai.completions.create({ model: 'synth', prompt: 'Once upon a time', max_tokens: 16,
                                                   temperature: 0.7, seed: 11 });
    assert.equal(again.choices[0].text, c.choices[0].text);
  });
});
