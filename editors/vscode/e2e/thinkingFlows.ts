// The model's thinking in the panel of the real VS Code: a model that thinks before it answers
// (a local fake of Anthropic's Messages API streaming a thinking block, then the answer; the
// server's Anthropic SDK reads it) behind `tether.provider` anthropic, the key stored with
// Tether: Set API Key, `/effort medium` typed in the panel. The thinking streams into a closed
// "Thinking" section before the answer, escaped; opened while it streams, it stays open.
// Runs last, in the same window, and puts the settings and the key back.
import * as assert from "assert";
import * as fs from "fs";
import * as http from "http";
import * as net from "net";
import * as path from "path";
import type { Locator } from "./browser";
import { panelFrame, visible } from "./panelFlows";
import { STEP_TIMEOUT_MS, Workbench, changeUserSettings } from "./workbench";

function sse(name: string, data: object): string {
  return `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
}

function delta(index: number, value: object): string {
  return sse("content_block_delta", { index, delta: value });
}

const THOUGHT = ["Let me look at app.py ", "and see what greet\nreturns\u001b[31m first."];

/** One streamed message: a thinking block (its first piece, then `gate`, then the rest), the answer. */
function message(): { head: string[]; tail: string[] } {
  const start = {
    message: {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-test",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 100, output_tokens: 1 },
    },
  };
  const head = [
    sse("message_start", start),
    sse("content_block_start", {
      index: 0,
      content_block: { type: "thinking", thinking: "", signature: "" },
    }),
    delta(0, { type: "thinking_delta", thinking: THOUGHT[0] }),
  ];
  const tail = [
    delta(0, { type: "thinking_delta", thinking: THOUGHT[1] }),
    delta(0, { type: "signature_delta", signature: "sig-1" }),
    sse("content_block_stop", { index: 0 }),
    sse("content_block_start", { index: 1, content_block: { type: "text", text: "" } }),
    delta(1, { type: "text_delta", text: "It greets people." }),
    sse("content_block_stop", { index: 1 }),
    sse("message_delta", {
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: 20 },
    }),
    sse("message_stop", {}),
  ];
  return { head, tail };
}

/** Tether: Set API Key for anthropic: `key`, or "" to delete the stored one. */
async function setKey(bench: Workbench, key: string): Promise<void> {
  const page = bench.page;
  await bench.command("Tether: Set API Key");
  const which = page.locator(".quick-input-widget", { hasText: "API key for which provider?" });
  await visible(which);
  await page.locator(".quick-input-widget input").fill("anthropic");
  await visible(page.locator(".quick-input-list .monaco-list-row", { hasText: "ANTHROPIC_API_KEY" }).first());
  await page.keyboard.press("Enter");
  await visible(page.locator(".quick-input-widget", { hasText: "anthropic API key" }));
  await page.locator(".quick-input-widget input").fill(key);
  await page.keyboard.press("Enter");
  await page.locator(".quick-input-widget").waitFor({ state: "hidden", timeout: STEP_TIMEOUT_MS });
}

export async function thinkingFlows(bench: Workbench, root: string, userData: string): Promise<string[]> {
  const passed: string[] = [];
  const bodies: Array<Record<string, unknown>> = [];
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const fake = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      void (async () => {
        bodies.push(JSON.parse(body) as Record<string, unknown>);
        const { head, tail } = message();
        response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        head.forEach((frame) => response.write(frame));
        await gate; // the model is still thinking
        tail.forEach((frame) => response.write(frame));
        response.end();
      })();
    });
  });
  await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(fake.address() as net.AddressInfo).port}`;
  const settingsFile = path.join(userData, "User", "settings.json");
  const original = JSON.parse(fs.readFileSync(settingsFile, "utf8")) as Record<string, unknown>;
  const panel = panelFrame(bench);
  const prompt = panel.locator("#prompt");
  const lastRun = (): Locator => panel.locator("article.run").last();
  const ask = async (text: string): Promise<void> => {
    await prompt.click();
    await prompt.fill(text);
    await prompt.press("Enter");
  };
  /** A prompt to the scripted model, answered: the server runs (again). */
  const ready = async (answer: string): Promise<void> => {
    fs.writeFileSync(path.join(root, "flow.json"), JSON.stringify({ turns: [{ text: answer }] }));
    await ask("are you there?");
    await visible(lastRun().locator(".answer", { hasText: answer }));
  };
  try {
    await bench.command("Tether: Open Agent Panel");
    await visible(prompt);
    await ready("Ready.");
    await setKey(bench, "test-key"); // restarts the server
    await ready("Ready again.");
    await changeUserSettings(bench, userData, {
      "tether.provider": "anthropic",
      "tether.baseUrl": url,
      "tether.model": "claude-sonnet-5-5",
    });
    await ask("/effort medium");
    await visible(
      panel.locator("article.command .command-output", {
        hasText: "effort: medium from the next message on",
      }),
    );

    // 1. While the model thinks: a closed Thinking section counting its words, no answer yet.
    await ask("what does app.py do?");
    const run = lastRun();
    const section = run.locator("details.thinking");
    await visible(section.locator("summary", { hasText: /^Thinking \(5 words\)$/ }));
    assert.strictEqual(await section.getAttribute("open"), null, "the thinking shows open");
    assert.strictEqual(await run.locator(".answer").count(), 0, "an answer before the model answered");
    await bench.screenshot("thinking-streaming");
    assert.strictEqual(bodies.length, 1);
    const thinking = bodies[0].thinking as { type?: string } | undefined;
    assert.strictEqual(
      thinking?.type,
      "enabled",
      `the request asked for no thinking: ${JSON.stringify(bodies[0])}`,
    );

    // 2. The user opens it while it streams: it stays open as the rest arrives, then the answer
    //    comes after it; the escape sequence in the thinking is written out, not obeyed.
    await section.locator("summary").click();
    await visible(section.locator(".thinking-text", { hasText: "Let me look at app.py" }));
    release();
    await visible(section.locator("summary", { hasText: /^Thinking \(11 words\)$/ }));
    await visible(run.locator(".answer", { hasText: "It greets people." }));
    await visible(run.locator(".outcome", { hasText: /^done/ }));
    assert.notStrictEqual(await section.getAttribute("open"), null, "the section the user opened closed");
    assert.strictEqual(
      await section.locator(".thinking-text").textContent(),
      "Let me look at app.py and see what greet\nreturns\\x1b[31m first.",
    );
    const items = run.locator(".items > *");
    const order: Array<string | null> = [];
    for (let i = 0; i < (await items.count()); i += 1) {
      order.push(await items.nth(i).getAttribute("class"));
    }
    assert.deepStrictEqual(order, ["thinking", "answer markdown"]);
    assert.ok(!((await run.locator(".answer").textContent()) ?? "").includes("Let me look"));
    await bench.screenshot("thinking-opened");
    passed.push(
      "thinking: a model that thinks (Anthropic's stream, /effort medium) streams into a closed Thinking section before the answer, counting its words; opened while it streams it stays open; its escape sequence written out",
    );
  } finally {
    release();
    await changeUserSettings(bench, userData, {
      "tether.provider": original["tether.provider"],
      "tether.baseUrl": original["tether.baseUrl"],
      "tether.model": original["tether.model"],
    });
    await setKey(bench, "");
    fake.closeAllConnections(); // the SDK keeps its connection alive
    await new Promise<void>((resolve) => fake.close(() => resolve()));
  }
  return passed;
}
