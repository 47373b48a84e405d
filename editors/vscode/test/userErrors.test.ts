import * as assert from "assert";
import { explainError, fixLabel } from "../src/userErrors";

describe("errors in the user's words, with their fix", () => {
  const cases: Array<[string, string, RegExp, string | undefined]> = [
    [
      "no provider",
      "agent/run: provider: no model provider is configured; set initializationOptions.provider (or TETHER_PROVIDER) to one of: scripted, openai, anthropic",
      /^No model provider is set\. Choose one in the tether\.provider setting/,
      "Open Setting tether.provider",
    ],
    [
      "no API key",
      "agent/run: provider: anthropic needs an API key: set ANTHROPIC_API_KEY in the environment of `tether serve`, or set baseUrl (TETHER_BASE_URL) to a server that needs none",
      /^Anthropic needs an API key\. Store one with Tether: Set API Key .* ANTHROPIC_API_KEY set\. .*tether\.baseUrl\.$/,
      "Set API Key",
    ],
    [
      "unknown provider",
      "agent/run: provider: unknown provider 'opneai'; known: scripted, openai, anthropic",
      /^The provider 'opneai' is not one Tether knows; choose one of scripted, openai, anthropic in the tether\.provider setting\.$/,
      "Open Setting tether.provider",
    ],
    [
      "a setting of the wrong type",
      "agent/run: initializationOptions.maxSteps: Input should be a valid integer",
      /^The setting tether\.maxSteps cannot be used: Input should be a valid integer$/,
      "Open Setting tether.maxSteps",
    ],
    [
      "a changed setting of the wrong type",
      "agent/run: settings.tether.autoApprove.0: Input should be 'edit_file', 'write_file' or 'bash'",
      /^The setting tether\.autoApprove cannot be used: Input should be/,
      "Open Setting tether.autoApprove",
    ],
    [
      "a project file",
      "agent/run: /src/app/.tether/config.toml: not valid TOML: Expected '=' (at line 2)",
      /^Your Tether config file \/src\/app\/\.tether\/config\.toml cannot be used: not valid TOML/,
      "Open Config File",
    ],
    [
      "a key of a project file",
      "agent/run: /src/app/.tether/config.toml.maxSteps: Input should be a valid integer",
      /^Your Tether config file \/src\/app\/\.tether\/config\.toml cannot be used: Input should be/,
      "Open Config File",
    ],
    [
      "a bad key",
      "the OpenAI API answered 401: Incorrect API key provided: sk-…",
      /^The model's API refused the key: .*401.*Store the right one with Tether: Set API Key\.$/,
      "Set API Key",
    ],
    [
      "an unreachable server",
      "connection to http://127.0.0.1:9/v1 failed (ConnectError: [Errno 111] Connection refused) (gave up after 4 attempts)",
      /^Tether could not reach http:\/\/127\.0\.0\.1:9\/v1: .* the tether\.baseUrl setting\.$/,
      "Open Setting tether.baseUrl",
    ],
    [
      "an unknown model",
      "the OpenAI API answered 404: The model `gpt-9` does not exist or you do not have access to it.",
      /^The model was not found: .*gpt-9.* Pick another with \/model, or in the tether\.model setting\.$/,
      "Open Setting tether.model",
    ],
    [
      "anything else",
      "agent/run: sessionId: unknown session 's-1'",
      /^sessionId: unknown session 's-1'$/,
      undefined,
    ],
  ];
  for (const [what, server, words, button] of cases) {
    it(what, () => {
      const explained = explainError(server);
      assert.match(explained.message, words);
      assert.strictEqual(explained.fix && fixLabel(explained.fix), button);
      assert.ok(!/initializationOptions|tether serve|agent\/run/.test(explained.message), explained.message);
    });
  }

  it("a fix only for a setting this extension has", () => {
    assert.strictEqual(explainError("initializationOptions.stateDir: not a folder").fix, undefined);
  });
});
