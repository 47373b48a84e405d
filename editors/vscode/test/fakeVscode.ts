// The part of the `vscode` API the extension's modules use, as plain objects that tests
// drive: each UI call is recorded and answered by a replaceable function.

export const version = "1.90.0";

export class Disposable {
  constructor(private readonly onDispose: () => void) {}
  dispose(): void {
    this.onDispose();
  }
}

export class EventEmitter<T> {
  private listeners: Array<(value: T) => void> = [];
  readonly event = (listener: (value: T) => void): Disposable => {
    this.listeners.push(listener);
    return new Disposable(() => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    });
  };
  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      listener(value);
    }
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
    readonly query = "",
  ) {}
  static parse(value: string): Uri {
    const match = /^([a-zA-Z][\w+.-]*):(?:\/\/([^/?]*))?([^?]*)(?:\?(.*))?$/.exec(value);
    if (match === null) {
      throw new Error(`not a URI: ${value}`);
    }
    return new Uri(
      match[1],
      match[2] ?? "",
      decodeURIComponent(match[3]),
      decodeURIComponent(match[4] ?? ""),
    );
  }
  static file(path: string): Uri {
    return new Uri("file", "", path);
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return new Uri(base.scheme, base.authority, [base.path, ...parts].join("/"));
  }
  static from(parts: { scheme: string; authority?: string; path?: string; query?: string }): Uri {
    return new Uri(parts.scheme, parts.authority ?? "", parts.path ?? "", parts.query ?? "");
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    const authority = this.authority !== "" || this.scheme === "file" ? `//${this.authority}` : "";
    const query = this.query === "" ? "" : `?${encodeURIComponent(this.query)}`;
    return `${this.scheme}:${authority}${encodeURI(this.path)}${query}`;
  }
}

export enum FileType {
  Unknown = 0,
  File = 1,
  Directory = 2,
}
export enum FileChangeType {
  Changed = 1,
  Created = 2,
  Deleted = 3,
}
export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

/** The status bar items created, newest last. */
export const statusItems: Array<{ text: string; command?: string; visible: boolean; disposed: boolean }> = [];

export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}

export class FileSystemError extends Error {
  static FileNotFound(uri?: Uri): FileSystemError {
    return new FileSystemError(`file not found: ${String(uri)}`);
  }
  static NoPermissions(uri?: Uri): FileSystemError {
    return new FileSystemError(`no permissions: ${String(uri)}`);
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(startLine: number, startCharacter: number, endLine: number, endCharacter: number) {
    this.start = new Position(startLine, startCharacter);
    this.end = new Position(endLine, endCharacter);
  }
}

export class Selection extends Range {
  readonly active: Position;
  constructor(anchor: Position, active: Position) {
    super(anchor.line, anchor.character, active.line, active.character);
    this.active = active;
  }
}

export enum TextEditorRevealType {
  Default = 0,
  InCenter = 1,
  InCenterIfOutsideViewport = 2,
  AtTop = 3,
}

export class TextEdit {
  constructor(
    readonly range: Range,
    readonly newText: string,
  ) {}
}

/** What the LanguageClient builds from a `workspace/applyEdit`, as a list of operations. */
export class WorkspaceEdit {
  readonly operations: Array<
    { kind: "create"; uri: Uri; overwrite: boolean } | { kind: "edit"; uri: Uri; edits: TextEdit[] }
  > = [];
  createFile(uri: Uri, options?: { overwrite?: boolean }): void {
    this.operations.push({ kind: "create", uri, overwrite: options?.overwrite ?? false });
  }
  replace(uri: Uri, range: Range, newText: string): void {
    this.set(uri, [new TextEdit(range, newText)]);
  }
  set(uri: Uri, edits: TextEdit[]): void {
    this.operations.push({ kind: "edit", uri, edits });
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export class MarkdownString {
  constructor(public value = "") {}
  appendText(text: string): MarkdownString {
    this.value += text;
    return this;
  }
  appendCodeblock(code: string, language = ""): MarkdownString {
    this.value += `\n\`\`\`${language}\n${code}\n\`\`\`\n`;
    return this;
  }
}

export enum CommentMode {
  Editing = 0,
  Preview = 1,
}

export enum CommentThreadCollapsibleState {
  Collapsed = 0,
  Expanded = 1,
}

/** A comment thread as the extension left it (`threads` holds every one made, disposed too). */
export interface FakeCommentThread {
  uri: Uri;
  range: Range;
  comments: Array<{ body: MarkdownString; contextValue?: string; author: { name: string } }>;
  canReply: boolean;
  label?: string;
  contextValue?: string;
  collapsibleState?: CommentThreadCollapsibleState;
  disposed: boolean;
  dispose(): void;
}

export const threads: FakeCommentThread[] = [];

export const comments = {
  createCommentController: (id: string, label: string) => {
    calls.push(["createCommentController", [id, label]]);
    return {
      id,
      label,
      createCommentThread: (uri: Uri, range: Range, initial: FakeCommentThread["comments"]) => {
        const thread: FakeCommentThread = {
          uri,
          range,
          comments: initial,
          canReply: true,
          disposed: false,
          dispose: () => (thread.disposed = true),
        };
        threads.push(thread);
        return thread;
      },
      dispose: () => undefined,
    };
  },
};

export class CodeLens {
  constructor(
    readonly range: Range,
    readonly command?: { title: string; command: string; arguments?: unknown[] },
  ) {}
}

/** An editor in `window.visibleTextEditors`: its decorations by type, as last set. */
export interface FakeEditor {
  document: FakeDocument;
  decorations: Map<unknown, unknown[]>;
  setDecorations(type: unknown, ranges: unknown[]): void;
  selection: { active: Position };
  revealRange(range: Range): void;
}

export function editor(doc: FakeDocument): FakeEditor {
  const decorations = new Map<unknown, unknown[]>();
  return {
    document: doc,
    decorations,
    setDecorations: (type, ranges) => decorations.set(type, ranges),
    selection: { active: new Position(0, 0) },
    revealRange: () => undefined,
  };
}

/** Fire to simulate typing in a document. */
export const textDocumentChanges = new EventEmitter<{
  document: { uri: Uri };
  contentChanges: Array<{ range: Range; text: string }>;
}>();

/** Fire to simulate switching editors. */
export const activeEditorChanges = new EventEmitter<unknown>();

export class TabInputText {
  constructor(readonly uri: Uri) {}
}
export class TabInputTextDiff {
  constructor(
    readonly original: Uri,
    readonly modified: Uri,
  ) {}
}

export class CancellationTokenSource {
  private readonly emitter = new EventEmitter<void>();
  readonly token = {
    isCancellationRequested: false,
    onCancellationRequested: this.emitter.event,
  };
  cancel(): void {
    if (!this.token.isCancellationRequested) {
      this.token.isCancellationRequested = true;
      this.emitter.fire();
    }
  }
}

export interface FakeDocument {
  uri: Uri;
  isDirty: boolean;
  isClosed: boolean;
  text: string;
  /** As VS Code counts: the line after a last line end counts too. */
  readonly lineCount: number;
  getText(): string;
  save(): Promise<boolean>;
}

type Answer<T> = (...args: unknown[]) => Promise<T>;

/** What was written to each output channel, by name. */
export const outputs: Record<string, string> = {};

/** Fire to simulate a settings change. */
export const configurationChanges = new EventEmitter<{ affectsConfiguration(section: string): boolean }>();

/** Every recorded call: [name, arguments]. */
export const calls: Array<[string, unknown[]]> = [];

function recorded<T>(name: string, answer: () => Answer<T>): Answer<T> {
  return (...args: unknown[]) => {
    calls.push([name, args]);
    return answer()(...args);
  };
}

const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

/** The answers the fake UI gives; tests replace them, `reset` restores these. */
export const answers = {
  showInformationMessage: (async () => undefined) as Answer<string | undefined>,
  showWarningMessage: (async () => undefined) as Answer<unknown>,
  showErrorMessage: (async () => undefined) as Answer<string | undefined>,
  showInputBox: (async () => undefined) as Answer<string | undefined>,
  showQuickPick: (async () => undefined) as Answer<unknown>,
  readFile: (async () => {
    throw FileSystemError.FileNotFound();
  }) as Answer<Uint8Array>,
  applyEdit: (async () => false) as Answer<boolean>,
};

const defaults = { ...answers };

export const window = {
  showInformationMessage: recorded("showInformationMessage", () => answers.showInformationMessage),
  showWarningMessage: recorded("showWarningMessage", () => answers.showWarningMessage),
  showErrorMessage: recorded("showErrorMessage", () => answers.showErrorMessage),
  showInputBox: recorded("showInputBox", () => answers.showInputBox),
  showQuickPick: recorded("showQuickPick", () => answers.showQuickPick),
  showTextDocument: recorded("showTextDocument", () => async () => undefined),
  createOutputChannel: (name: string) => {
    calls.push(["createOutputChannel", [name]]);
    outputs[name] = "";
    return {
      name,
      append: (text: string) => (outputs[name] += text),
      appendLine: (text: string) => (outputs[name] += `${text}\n`),
      show: () => undefined,
      dispose: () => undefined,
    };
  },

  createStatusBarItem: (...args: unknown[]) => {
    calls.push(["createStatusBarItem", args]);
    const item = {
      text: "",
      tooltip: "",
      command: undefined as string | undefined,
      visible: false,
      disposed: false,
      show: () => (item.visible = true),
      hide: () => (item.visible = false),
      dispose: () => {
        item.visible = false;
        item.disposed = true;
      },
    };
    statusItems.push(item);
    return item;
  },
  setStatusBarMessage: (...args: unknown[]) => {
    calls.push(["setStatusBarMessage", args]);
    return new Disposable(() => undefined);
  },
  withProgress: async <R>(
    options: unknown,
    task: (progress: { report(value: unknown): void }, token: CancellationTokenSource["token"]) => Promise<R>,
  ): Promise<R> => {
    calls.push(["withProgress", [options]]);
    return task({ report: (value) => calls.push(["progress.report", [value]]) }, progressCancel.token);
  },
  activeTextEditor: undefined as unknown,
  visibleTextEditors: [] as FakeEditor[],
  onDidChangeActiveTextEditor: activeEditorChanges.event,
  onDidChangeTextEditorSelection: new EventEmitter<unknown>().event,
  createTextEditorDecorationType: (options: unknown) => {
    calls.push(["createTextEditorDecorationType", [options]]);
    return { options, dispose: () => undefined };
  },
  tabGroups: {
    all: [] as Array<{ tabs: Array<{ input: unknown }> }>,
    close: recorded("tabGroups.close", () => async () => true),
  },
  registerWebviewViewProvider: (id: string, provider: WebviewViewProvider) => {
    webviewProviders.set(id, provider);
    return new Disposable(() => webviewProviders.delete(id));
  },
};

interface WebviewViewProvider {
  resolveWebviewView(view: unknown): void;
}

/** The webview views registered (the agent panel), by view id. */
export const webviewProviders = new Map<string, WebviewViewProvider>();

/** A visible webview view: what the extension posts to it, and a way to send it messages. */
export interface FakeWebviewView {
  readonly posted: unknown[];
  /** A message from the page (the user's action). */
  send(message: unknown): Promise<void>;
}

/** Resolves the registered view `id` as VS Code does when it is shown. */
export function showWebviewView(id: string): FakeWebviewView {
  const provider = webviewProviders.get(id);
  if (provider === undefined) {
    throw new Error(`no webview view ${id}`);
  }
  const posted: unknown[] = [];
  let receive: (message: unknown) => unknown = () => undefined;
  const view = {
    visible: true,
    webview: {
      options: {},
      html: "",
      cspSource: "vscode-resource:",
      asWebviewUri: (uri: Uri) => uri,
      postMessage: async (message: unknown) => {
        posted.push(message);
        return true;
      },
      onDidReceiveMessage: (listener: (message: unknown) => unknown) => {
        receive = listener;
        return new Disposable(() => undefined);
      },
    },
    onDidChangeVisibility: () => new Disposable(() => undefined),
    onDidDispose: () => new Disposable(() => undefined),
  };
  provider.resolveWebviewView(view);
  return { posted, send: async (message) => void (await receive(message)) };
}

/** Cancels the progress notification of the next `withProgress`. */
export let progressCancel = new CancellationTokenSource();

const openDocuments = (): FakeDocument[] => workspace.textDocuments;

export const workspace = {
  textDocuments: [] as FakeDocument[],
  workspaceFolders: undefined as Array<{ uri: Uri; name: string }> | undefined,
  fs: { readFile: recorded("fs.readFile", () => answers.readFile) },
  applyEdit: recorded("applyEdit", () => answers.applyEdit),
  openTextDocument: recorded("openTextDocument", () => async (uri: unknown): Promise<FakeDocument> => {
    const found = openDocuments().find((doc) => doc.uri.toString() === String(uri));
    if (found === undefined) {
      throw FileSystemError.FileNotFound(uri as Uri);
    }
    return found;
  }),
  onDidChangeTextDocument: textDocumentChanges.event,
  asRelativePath: (uri: Uri | string) =>
    typeof uri === "string" ? uri : uri.path.replace(/^\/work\/app\//, ""),
  getConfiguration: (section: string) => ({
    get: <T>(key: string, fallback?: T): T | undefined => {
      calls.push(["getConfiguration.get", [`${section}.${key}`]]);
      return (settings[key] as T | undefined) ?? fallback;
    },
  }),
  registerFileSystemProvider: (scheme: string) => {
    calls.push(["registerFileSystemProvider", [scheme]]);
    return new Disposable(() => undefined);
  },
  onDidChangeConfiguration: configurationChanges.event,
};

/** What `languages.getDiagnostics` reports: [uri, diagnostics] per file, as the Problems view. */
export const problems: Array<[Uri, unknown[]]> = [];

export const languages = {
  getDiagnostics: (uri?: Uri): unknown => {
    calls.push(["getDiagnostics", uri === undefined ? [] : [uri.toString()]]);
    if (uri === undefined) {
      return problems;
    }
    return problems.find(([known]) => known.toString() === uri.toString())?.[1] ?? [];
  },
};

export const commands = {
  executeCommand: recorded("executeCommand", () => async () => undefined),
  registered: new Map<string, (...args: unknown[]) => unknown>(),
  registerCommand(id: string, run: (...args: unknown[]) => unknown): Disposable {
    if (commands.registered.has(id)) {
      throw new Error(`command '${id}' already exists`); // as VS Code does
    }
    commands.registered.set(id, run);
    return new Disposable(() => commands.registered.delete(id));
  },
};

export const env = {
  appName: "Visual Studio Code",
  language: "en",
  remoteName: undefined as string | undefined,
};

/** The `tether.*` settings `getConfiguration` answers with. */
export const settings: Record<string, unknown> = {};

export function reset(): void {
  calls.length = 0;
  statusItems.length = 0;
  threads.length = 0;
  problems.length = 0;
  env.remoteName = undefined;
  Object.assign(answers, defaults);
  workspace.textDocuments = [];
  window.activeTextEditor = undefined;
  window.visibleTextEditors = [];
  window.tabGroups.all = [];
  progressCancel = new CancellationTokenSource();
  commands.registered.clear();
  for (const key of Object.keys(settings)) {
    delete settings[key];
  }
}

export function document(uri: Uri, text: string, isDirty = false): FakeDocument {
  const doc: FakeDocument = {
    uri,
    isDirty,
    isClosed: false,
    text,
    get lineCount() {
      return doc.text.split(/\r\n|\n|\r/).length;
    },
    getText: () => doc.text,
    save: async () => {
      calls.push(["document.save", [uri.toString()]]);
      doc.isDirty = false;
      return true;
    },
  };
  return doc;
}

export { never };

/** Resolves once `condition` holds, checked after each turn of the event loop. */
export async function until(condition: () => boolean): Promise<void> {
  while (!condition()) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

// vscode-languageclient extends VS Code classes at load time (CompletionItem, CodeLens, …)
// and subscribes to many workspace events when it starts: a name this fake does not define
// is a bare class at the top level, and a no-op subscription inside a namespace.
const noop = (): Disposable => new Disposable(() => undefined);
function lenient<T extends object>(target: T): T {
  return new Proxy(target, {
    get: (object, name) => (name in object ? object[name as keyof T] : noop),
  });
}
const defined = module.exports as Record<string | symbol, unknown>;
for (const namespace of ["window", "workspace", "commands", "languages", "env"]) {
  defined[namespace] = lenient((defined[namespace] ?? {}) as object);
}
module.exports = new Proxy(defined, {
  get: (target, name) => (name in target ? target[name] : (target[name] = class {})),
});
