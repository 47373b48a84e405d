// Why a prompt could not run, in the words of someone in VS Code, with what fixes it. The
// server words its refusals for any client ("set initializationOptions.provider", "in the
// environment of `tether serve`"); here they become the settings and commands of this
// extension, each with one fix: a setting to open, the API key to store, a file to open.
// No `vscode` import: tested directly.
import { SERVER_SETTINGS } from "./settings";

/** What fixes a problem: one of a few actions the extension performs itself. */
export type Fix =
  /** Settings opened at `tether.<key>`. */
  | { readonly kind: "setting"; readonly key: string }
  /** Tether: Set API Key. */
  | { readonly kind: "apiKey" }
  /** A config file opened in the editor. */
  | { readonly kind: "file"; readonly path: string }
  /** The transcript ("Tether" output), where the server's own words are. */
  | { readonly kind: "log" };

export interface Explained {
  /** For the user: what is wrong and where to change it. */
  readonly message: string;
  readonly fix?: Fix;
}

/** The fix's button. */
export function fixLabel(fix: Fix): string {
  switch (fix.kind) {
    case "setting":
      return `Open Setting tether.${fix.key}`;
    case "apiKey":
      return "Set API Key";
    case "file":
      return "Open Config File";
    case "log":
      return "Show Log";
  }
}

const PROVIDER_NAMES: Record<string, string> = { openai: "OpenAI", anthropic: "Anthropic" };

/** The server's protocol words as a VS Code user knows them. */
const WORDS: ReadonlyArray<[string | RegExp, string]> = [
  [/^agent\/(run|command): /, ""],
  ["set initializationOptions.provider (or TETHER_PROVIDER)", "set tether.provider"],
  [/\binitializationOptions\./g, "tether."],
  [/\bsettings\.tether\./g, "tether."],
  [" in the environment of `tether serve`", " in the environment VS Code started with"],
  ["set baseUrl (TETHER_BASE_URL)", "set tether.baseUrl"],
];

function inUserWords(message: string): string {
  let text = message.trim();
  for (const [wire, plain] of WORDS) {
    text = text.replace(wire, plain);
  }
  return text;
}

const KNOWN_SETTINGS = new Set<string>([...SERVER_SETTINGS, "serverPath"]);

/** A setting the user can open: a `tether.*` setting this extension contributes. */
function settingFix(key: string): Fix | undefined {
  return KNOWN_SETTINGS.has(key) ? { kind: "setting", key } : undefined;
}

/**
 * A refusal of the server (`agent/run`'s error) or a run's error (`AgentRunResult.error`)
 * explained: the known ones in the user's words with their fix, any other in the server's
 * words with the protocol's names turned into the settings'.
 */
export function explainError(serverMessage: string): Explained {
  const message = inUserWords(serverMessage);
  let match: RegExpExecArray | null;
  if (/no model provider is configured/.test(message)) {
    return {
      message:
        "No model provider is set. Choose one in the tether.provider setting: openai or anthropic " +
        "(scripted plays a script, for demos).",
      fix: { kind: "setting", key: "provider" },
    };
  }
  if ((match = /(\w+) needs an API key: set (\w+)/.exec(message)) !== null) {
    const provider = PROVIDER_NAMES[match[1]] ?? match[1];
    return {
      message:
        `${provider} needs an API key. Store one with Tether: Set API Key (kept in VS Code's ` +
        `secret storage), or start VS Code with ${match[2]} set. For a local server that needs ` +
        "no key, set tether.baseUrl.",
      fix: { kind: "apiKey" },
    };
  }
  if ((match = /unknown provider ('[^']*'|"[^"]*"); known: (.*)$/.exec(message)) !== null) {
    return {
      message: `The provider ${match[1]} is not one Tether knows; choose one of ${match[2]} in the tether.provider setting.`,
      fix: { kind: "setting", key: "provider" },
    };
  }
  if (/^script: the scripted provider needs a script/.test(message)) {
    return {
      message: "The scripted provider needs a script: set tether.script to a script file of the workspace.",
      fix: { kind: "setting", key: "script" },
    };
  }
  if ((match = /^tether\.(\w+)[\w.[\]]*: (.*)$/s.exec(message)) !== null) {
    const fix = settingFix(match[1]);
    return {
      message: `The setting tether.${match[1]} cannot be used: ${match[2]}`,
      ...(fix !== undefined ? { fix } : {}),
    };
  }
  if ((match = /^(\w+): (.*)$/s.exec(message)) !== null && settingFix(match[1]) !== undefined) {
    return { message: `tether.${match[1]}: ${match[2]}`, fix: { kind: "setting", key: match[1] } };
  }
  if ((match = /^(\/\S*?(?:config\.toml|\.mcp\.json))\b[^:]*: (.*)$/s.exec(message)) !== null) {
    return {
      message: `Your Tether config file ${match[1]} cannot be used: ${match[2]}`,
      fix: { kind: "file", path: match[1] },
    };
  }
  if (
    /answered 40[13]\b|invalid[ _-]?(x-)?api[ _-]?key|authentication_error|incorrect api key/i.test(message)
  ) {
    return {
      message: `The model's API refused the key: ${message}. Store the right one with Tether: Set API Key.`,
      fix: { kind: "apiKey" },
    };
  }
  if ((match = /(?:connection to|request to) (\S+) (?:failed|timed out|lost)/.exec(message)) !== null) {
    return {
      message:
        `Tether could not reach ${match[1]}: ${message}. Check the network, or the address in the ` +
        "tether.baseUrl setting.",
      fix: { kind: "setting", key: "baseUrl" },
    };
  }
  if (/answered 404\b/.test(message) || /model\b.*\b(not found|does not exist)/i.test(message)) {
    return {
      message: `The model was not found: ${message}. Pick another with /model, or in the tether.model setting.`,
      fix: { kind: "setting", key: "model" },
    };
  }
  return { message };
}
