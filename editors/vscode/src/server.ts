// The `tether serve` process behind a LanguageClient: started with the settings as
// initializationOptions and stored API keys in its environment, told about settings
// changes, restarted when its path or a key changes.
import * as vscode from "vscode";
import {
  CloseAction,
  type CloseHandlerResult,
  type ErrorHandler,
  Executable,
  LanguageClient,
  LanguageClientOptions,
} from "vscode-languageclient/node";
import type { Approvals } from "./approvals";
import { answerAsk } from "./ask";
import { TetherCapabilitiesFeature } from "./capabilities";
import { answerCode } from "./code";
import { answerDiagnostics } from "./diagnostics";
import { storedKeys } from "./keys";
import type { AgentEventParams } from "./protocol";
import { TetherProtocol } from "./protocolClient";
import { saveOpenDocuments } from "./save";
import { SaveGuard } from "./saveGuard";
import {
  resolveServerPath,
  serverEnvironment,
  serverNotFoundMessage,
  settingsChange,
  tetherSettings,
} from "./settings";
import { Transcript } from "./transcript";

export class ServerNotFoundError extends Error {}

function settingsFromConfiguration(): ReturnType<typeof tetherSettings> {
  const configuration = vscode.workspace.getConfiguration("tether");
  return tetherSettings((key) => configuration.get(key));
}

/** As a change: the unset ones `null` (a setting removed since the start stops applying). */
function changeFromConfiguration(): ReturnType<typeof settingsChange> {
  const configuration = vscode.workspace.getConfiguration("tether");
  return settingsChange((key) => configuration.get(key));
}

function workspacePaths(): string[] {
  return (vscode.workspace.workspaceFolders ?? [])
    .filter((f) => f.uri.scheme === "file")
    .map((f) => f.uri.fsPath);
}

export class TetherServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private protocol: TetherProtocol | undefined;
  private starting: Promise<TetherProtocol> | undefined;
  private readonly serverOutput = vscode.window.createOutputChannel("Tether Server");
  /** The end of what the server process wrote (its stderr comes through the channel). */
  private outputTail = "";
  /** The channel as the LanguageClient writes to it: each write also kept in `outputTail`. */
  private readonly clientOutput = new Proxy(this.serverOutput, {
    get: (channel, name: keyof vscode.OutputChannel) => {
      if (name === "append" || name === "appendLine") {
        return (text: string) => {
          this.outputTail = `${this.outputTail}${text}${name === "appendLine" ? "\n" : ""}`.slice(-4000);
          channel[name](text);
        };
      }
      const value = channel[name];
      return typeof value === "function" ? value.bind(channel) : value;
    },
  });

  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly transcript: Transcript,
    private readonly approvals: Pick<Approvals, "approve" | "runEnded">,
    private readonly saves: SaveGuard,
    /** Also told of every `agent/event` (the agent panel). */
    private readonly onEvent?: (event: AgentEventParams) => void,
  ) {}

  get running(): boolean {
    return this.client?.isRunning() ?? false;
  }

  /** The protocol layer of a running server, starting it first when needed. */
  ensureStarted(): Promise<TetherProtocol> {
    if (this.protocol !== undefined && this.running) {
      return Promise.resolve(this.protocol);
    }
    this.starting ??= this.start().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /** Sends the current `tether.*` settings for later runs. */
  async configure(): Promise<void> {
    if (this.protocol !== undefined && this.running) {
      await this.protocol.configure(changeFromConfiguration());
    }
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.ensureStarted();
  }

  /** `shutdown` + `exit`; the server cancels its runs and exits. */
  async stop(): Promise<void> {
    const client = this.client;
    this.protocol?.dispose();
    this.client = undefined;
    this.protocol = undefined;
    if (client !== undefined) {
      await client.stop(3000).catch(() => undefined);
      await client.dispose().catch(() => undefined);
    }
  }

  showLog(): void {
    this.serverOutput.show();
  }

  /**
   * Why the server process stopped, when it said so since it was last started: the last
   * `tether: …` line it wrote (a config file that cannot be used ends it with status 2).
   */
  lastError(): string | undefined {
    const said = [...this.outputTail.matchAll(/^tether: (.+)$/gm)].at(-1);
    return said?.[1].trim();
  }

  dispose(): void {
    void this.stop();
    this.serverOutput.dispose();
  }

  private async start(): Promise<TetherProtocol> {
    const configuration = vscode.workspace.getConfiguration("tether");
    const folders = workspacePaths();
    const command = resolveServerPath(
      configuration.get<string>("serverPath", ""),
      folders,
      undefined,
      vscode.workspace.isTrusted,
    );
    if (command === undefined) {
      throw new ServerNotFoundError(serverNotFoundMessage(vscode.env.remoteName));
    }
    const server: Executable = {
      command,
      args: ["serve"],
      options: { env: serverEnvironment(process.env, await storedKeys(this.secrets)), cwd: folders[0] },
    };
    const clientOptions: LanguageClientOptions = {
      // Every file buffer is synced: the agent reads what the user sees, unsaved text included.
      documentSelector: [{ scheme: "file" }],
      initializationOptions: settingsFromConfiguration(),
      outputChannel: this.clientOutput,
      errorHandler: {
        error: (error, message, count) => restarts().error(error, message, count),
        // A server that said why it stopped (`tether: …`, status 2: a config file that
        // cannot be used) would stop again: not restarted, the prompt says why instead.
        closed: (): CloseHandlerResult | Promise<CloseHandlerResult> =>
          this.lastError() !== undefined
            ? { action: CloseAction.DoNotRestart, handled: true }
            : restarts().closed(),
      },
    };
    let defaults: ErrorHandler | undefined;
    const restarts = (): ErrorHandler => (defaults ??= client.createDefaultErrorHandler());
    this.outputTail = ""; // a new process: what an earlier one said no longer holds
    const client = new LanguageClient("tether", "Tether", server, clientOptions);
    client.registerFeature(new TetherCapabilitiesFeature());
    const protocol = new TetherProtocol(client, {
      onEvent: (event) => {
        this.transcript.handle(event);
        this.saves.handle(event);
        if (event.kind === "run-finished") {
          this.approvals.runEnded(event.runId); // what it still asked is not waited for
        }
        this.onEvent?.(event);
      },
      approve: (params, token) => this.approvals.approve(params, token),
      saveDocuments: (params) => saveOpenDocuments(params, this.saves),
      diagnostics: answerDiagnostics,
      code: answerCode,
      ask: answerAsk,
    });
    try {
      await client.start();
    } catch (error) {
      protocol.dispose();
      await client.dispose().catch(() => undefined);
      throw error;
    }
    this.client = client;
    this.protocol = protocol;
    return protocol;
  }
}
