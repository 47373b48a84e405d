// API keys live in VS Code's SecretStorage (never in settings) and reach the server only
// through its process environment.
import * as vscode from "vscode";
import { API_KEY_VARIABLES, KeyedProvider, secretKey } from "./settings";

const PROVIDERS = Object.keys(API_KEY_VARIABLES) as KeyedProvider[];

/** The keys stored in SecretStorage, by provider. */
export async function storedKeys(
  secrets: vscode.SecretStorage,
): Promise<Partial<Record<KeyedProvider, string>>> {
  const keys: Partial<Record<KeyedProvider, string>> = {};
  for (const provider of PROVIDERS) {
    const key = await secrets.get(secretKey(provider));
    if (key !== undefined && key !== "") {
      keys[provider] = key;
    }
  }
  return keys;
}

/** Tether: Set API Key: store (or, left empty, delete) a provider's key. True when changed. */
export async function setApiKey(secrets: vscode.SecretStorage): Promise<boolean> {
  const picked = await vscode.window.showQuickPick(
    PROVIDERS.map((provider) => ({ label: provider, description: API_KEY_VARIABLES[provider] })),
    { title: "Tether: API key for which provider?" },
  );
  if (picked === undefined) {
    return false;
  }
  const provider = picked.label as KeyedProvider;
  const key = await vscode.window.showInputBox({
    title: `Tether: ${provider} API key`,
    prompt: `Kept in VS Code's secret storage and given to the server as ${API_KEY_VARIABLES[provider]}. Empty: delete the stored key.`,
    password: true,
    ignoreFocusOut: true,
  });
  if (key === undefined) {
    return false;
  }
  if (key.trim() === "") {
    await secrets.delete(secretKey(provider));
  } else {
    await secrets.store(secretKey(provider), key.trim());
  }
  return true;
}
