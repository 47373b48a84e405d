// An in-memory file system for proposed texts (`tether-proposal:`): a virtual document that
// the diff editor shows on the right and the user may edit (and even save) before allowing.
import * as vscode from "vscode";

export const PROPOSAL_SCHEME = "tether-proposal";

interface Entry {
  data: Uint8Array;
  ctime: number;
  mtime: number;
}

export class ProposalFiles implements vscode.FileSystemProvider {
  private readonly files = new Map<string, Entry>();
  private readonly changes = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changes.event;

  /** Registers the provider; dispose the result to unregister. */
  static register(files: ProposalFiles): vscode.Disposable {
    return vscode.workspace.registerFileSystemProvider(PROPOSAL_SCHEME, files, { isCaseSensitive: true });
  }

  /** A proposal's URI: unique per call, ending in the file's name so the language fits. */
  static uriFor(runId: string, callId: string, fileName: string): vscode.Uri {
    const segment = (value: string): string => value.replace(/[^\w.-]/g, "_");
    return vscode.Uri.from({
      scheme: PROPOSAL_SCHEME,
      path: `/${segment(runId)}/${segment(callId)}/${fileName}`,
    });
  }

  setText(uri: vscode.Uri, text: string): void {
    this.writeFile(uri, new TextEncoder().encode(text));
  }

  text(uri: vscode.Uri): string | undefined {
    const entry = this.files.get(uri.path);
    return entry === undefined ? undefined : new TextDecoder().decode(entry.data);
  }

  remove(uri: vscode.Uri): void {
    if (this.files.delete(uri.path)) {
      this.changes.fire([{ type: vscode.FileChangeType.Deleted, uri }]);
    }
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const entry = this.files.get(uri.path);
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
    for (const file of this.files.keys()) {
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
    const entry = this.files.get(uri.path);
    if (entry === undefined) {
      throw vscode.FileSystemError.FileNotFound(uri);
    }
    return entry.data;
  }

  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    const now = Date.now();
    const existing = this.files.get(uri.path);
    this.files.set(uri.path, { data: content, ctime: existing?.ctime ?? now, mtime: now });
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
    return [...this.files.keys()].some((file) => file.startsWith(prefix));
  }
}
