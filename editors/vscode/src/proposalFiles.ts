// An in-memory file system for proposed texts (`tether-proposal:`): a virtual document that
// the diff editor shows on the right and the user may edit (and even save) before allowing.
import * as vscode from "vscode";

export const PROPOSAL_SCHEME = "tether-proposal";

interface Entry {
  /** The file's path without the query that tells proposals of the same name apart. */
  path: string;
  data: Uint8Array;
  ctime: number;
  mtime: number;
}

function keyOf(uri: vscode.Uri): string {
  return uri.query === "" ? uri.path : `${uri.path}?${uri.query}`;
}

export class ProposalFiles implements vscode.FileSystemProvider {
  private readonly files = new Map<string, Entry>();
  private readonly changes = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changes.event;

  /** Registers the provider; dispose the result to unregister. */
  static register(files: ProposalFiles): vscode.Disposable {
    return vscode.workspace.registerFileSystemProvider(PROPOSAL_SCHEME, files, { isCaseSensitive: true });
  }

  /**
   * A proposal's URI: the file's name as its path (the breadcrumb shows that alone, and the
   * language fits), unique per call through its query.
   */
  static uriFor(runId: string, callId: string, fileName: string): vscode.Uri {
    const segment = (value: string): string => value.replace(/[^\w.-]/g, "_");
    return vscode.Uri.from({
      scheme: PROPOSAL_SCHEME,
      path: `/${fileName}`,
      query: `${segment(runId)}.${segment(callId)}`,
    });
  }

  setText(uri: vscode.Uri, text: string): void {
    this.writeFile(uri, new TextEncoder().encode(text));
  }

  text(uri: vscode.Uri): string | undefined {
    const entry = this.files.get(keyOf(uri));
    return entry === undefined ? undefined : new TextDecoder().decode(entry.data);
  }

  remove(uri: vscode.Uri): void {
    if (this.files.delete(keyOf(uri))) {
      this.changes.fire([{ type: vscode.FileChangeType.Deleted, uri }]);
    }
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const entry = this.files.get(keyOf(uri));
    if (entry !== undefined) {
      return { type: vscode.FileType.File, ctime: entry.ctime, mtime: entry.mtime, size: entry.data.length };
    }
    if (this.isDirectory(uri.path)) {
      return { type: vscode.FileType.Directory, ctime: 0, mtime: 0, size: 0 };
    }
    throw vscode.FileSystemError.FileNotFound(uri);
  }

  readDirectory(uri: vscode.Uri): Array<[string, vscode.FileType]> {
    const prefix = uri.path.endsWith("/") ? uri.path : `${uri.path}/`;
    const entries = new Map<string, vscode.FileType>();
    for (const { path: file } of this.files.values()) {
      if (file.startsWith(prefix)) {
        const [name, ...rest] = file.slice(prefix.length).split("/");
        entries.set(name, rest.length > 0 ? vscode.FileType.Directory : vscode.FileType.File);
      }
    }
    return [...entries];
  }

  createDirectory(): void {
    // Folders exist implicitly, as prefixes of the files' paths.
  }

  readFile(uri: vscode.Uri): Uint8Array {
    const entry = this.files.get(keyOf(uri));
    if (entry === undefined) {
      throw vscode.FileSystemError.FileNotFound(uri);
    }
    return entry.data;
  }

  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    const now = Date.now();
    const existing = this.files.get(keyOf(uri));
    this.files.set(keyOf(uri), { path: uri.path, data: content, ctime: existing?.ctime ?? now, mtime: now });
    const type = existing === undefined ? vscode.FileChangeType.Created : vscode.FileChangeType.Changed;
    this.changes.fire([{ type, uri }]);
  }

  delete(uri: vscode.Uri): void {
    this.remove(uri);
  }

  rename(oldUri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(oldUri);
  }

  dispose(): void {
    this.files.clear();
    this.changes.dispose();
  }

  private isDirectory(path: string): boolean {
    const prefix = path.endsWith("/") ? path : `${path}/`;
    return [...this.files.values()].some((entry) => entry.path.startsWith(prefix));
  }
}
