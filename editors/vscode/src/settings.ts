// Settings → what the server gets (initializationOptions, didChangeConfiguration, process
// environment), and where the server executable is. No `vscode` import: tested directly.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import type { Settings } from "./protocol";

/** Reads one `tether.*` setting (the extension passes WorkspaceConfiguration.get). */
export type SettingReader = (key: string) => unknown;

/** Settings the server reads; `tether.serverPath` is the extension's own. */
export const SERVER_SETTINGS = [
  "provider",
  "model",
  "baseUrl",
  "script",
  "autoApprove",
  "maxSteps",
  "sandbox",
  "diagnosticsSettleMs",
  "diagnosticsMaxWaitMs",
] as const;

const SANDBOX_CHOICES = ["off", "auto", "bwrap", "landlock"] as const;
/** The server's bound on both diagnostics waits (protocol `Settings`). */
const MAX_DIAGNOSTICS_MS = 60_000;

function milliseconds(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= MAX_DIAGNOSTICS_MS
    ? value
    : undefined;
}

/** Providers whose API key may live in SecretStorage, and the variable the server reads. */
export const API_KEY_VARIABLES = {
  openai: "OPENAI_API_KEY",
  anthropic: "ANTHROPIC_API_KEY",
} as const;
export type KeyedProvider = keyof typeof API_KEY_VARIABLES;

export function secretKey(provider: KeyedProvider): string {
  return `tether.apiKey.${provider}`;
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/**
 * The server settings the user set. Unset values are left out so the server falls back to
 * its environment (`TETHER_PROVIDER`, …) and defaults; wrong types are left out too (the
 * settings UI validates them; a hand-edited settings.json must not break initialize).
 */
export function tetherSettings(read: SettingReader): Settings {
  const settings: Settings = {};
  const provider = text(read("provider"));
  const model = text(read("model"));
  const baseUrl = text(read("baseUrl"));
  const script = text(read("script"));
  if (provider !== undefined) {
    settings.provider = provider;
  }
  if (model !== undefined) {
    settings.model = model;
  }
  if (baseUrl !== undefined) {
    settings.baseUrl = baseUrl;
  }
  if (script !== undefined) {
    settings.script = script;
  }
  const autoApprove = read("autoApprove");
  if (Array.isArray(autoApprove) && autoApprove.every((tool) => typeof tool === "string")) {
    settings.autoApprove = [...new Set(autoApprove as string[])];
  }
  const maxSteps = read("maxSteps");
  if (typeof maxSteps === "number" && Number.isInteger(maxSteps) && maxSteps >= 1) {
    settings.maxSteps = maxSteps;
  }
  // "off" is passed too: the user's editor setting then wins over TETHER_SANDBOX.
  const sandbox = read("sandbox");
  if (SANDBOX_CHOICES.includes(sandbox as (typeof SANDBOX_CHOICES)[number])) {
    settings.sandbox = sandbox as (typeof SANDBOX_CHOICES)[number];
  }
  const settleMs = milliseconds(read("diagnosticsSettleMs"));
  if (settleMs !== undefined) {
    settings.diagnosticsSettleMs = settleMs;
  }
  const maxWaitMs = milliseconds(read("diagnosticsMaxWaitMs"));
  if (maxWaitMs !== undefined) {
    settings.diagnosticsMaxWaitMs = maxWaitMs;
  }
  return settings;
}

/**
 * The settings as a change (`workspace/didChangeConfiguration`): those set, and `null` for
 * every other server setting, so that one the user removed stops applying — the server
 * keeps `initializationOptions` beneath this layer, except the keys it names.
 */
export function settingsChange(read: SettingReader): Settings {
  const unset = Object.fromEntries(SERVER_SETTINGS.map((key) => [key, null])) as Settings;
  return { ...unset, ...tetherSettings(read) };
}

/** The server's environment: the editor's, plus API keys stored in SecretStorage. */
export function serverEnvironment(
  base: NodeJS.ProcessEnv,
  storedKeys: Partial<Record<KeyedProvider, string>>,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const provider of Object.keys(API_KEY_VARIABLES) as KeyedProvider[]) {
    const key = storedKeys[provider];
    // A key the user stored in the editor wins over a (possibly stale) inherited one.
    if (key !== undefined && key !== "") {
      env[API_KEY_VARIABLES[provider]] = key;
    }
  }
  return env;
}

export interface ServerLookup {
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  isExecutable(file: string): boolean;
}

export function isExecutableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

export const defaultLookup: ServerLookup = {
  env: process.env,
  platform: process.platform,
  isExecutable: isExecutableFile,
};

function onPath(name: string, lookup: ServerLookup): string | undefined {
  const separator = lookup.platform === "win32" ? ";" : ":";
  const names = lookup.platform === "win32" ? [`${name}.exe`, `${name}.cmd`, name] : [name];
  for (const dir of (lookup.env.PATH ?? "").split(separator)) {
    for (const candidate of names) {
      const file = path.join(dir, candidate);
      if (dir !== "" && lookup.isExecutable(file)) {
        return file;
      }
    }
  }
  return undefined;
}

/**
 * The `tether` executable: the configured path (`~` expanded; a relative path with a
 * slash is taken from the first workspace folder), else `tether` on PATH, else a workspace's `.venv`
 * — only when the user trusts the workspace: it is a program a cloned repository could bring.
 * Undefined: none.
 */
export function resolveServerPath(
  configured: string,
  folders: readonly string[],
  lookup: ServerLookup = defaultLookup,
  workspaceTrusted = false,
): string | undefined {
  const setting = configured.trim();
  if (setting !== "") {
    const expanded = setting.startsWith("~/") ? path.join(os.homedir(), setting.slice(2)) : setting;
    // A bare name (`tether`, `tether-dev`) is looked up on PATH when the server starts.
    if (path.isAbsolute(expanded) || !/[\\/]/.test(expanded) || folders.length === 0) {
      return expanded;
    }
    return path.join(folders[0], expanded);
  }
  const found = onPath("tether", lookup);
  if (found !== undefined || !workspaceTrusted) {
    return found;
  }
  const venvBinary =
    lookup.platform === "win32"
      ? path.join(".venv", "Scripts", "tether.exe")
      : path.join(".venv", "bin", "tether");
  return folders.map((folder) => path.join(folder, venvBinary)).find((file) => lookup.isExecutable(file));
}

/**
 * Why no server started, and where to set `tether.serverPath`: a machine setting, which a
 * remote window (Remote-SSH, WSL, containers, code-server; `remoteName` set) takes from its
 * Remote settings, never from the User settings.
 */
export function serverNotFoundMessage(remoteName: string | undefined): string {
  const where =
    remoteName === undefined || remoteName === ""
      ? "set tether.serverPath in your User settings"
      : `set tether.serverPath in the Remote settings of this ${remoteName} window ` +
        "(Preferences: Open Remote Settings); User settings do not apply to it here";
  return (
    "the Tether server was not found: no `tether` on PATH, and no .venv/bin/tether in the workspace " +
    "(used only in a trusted workspace). " +
    `Install Tether, or ${where}.`
  );
}
