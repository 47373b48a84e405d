// The server saves a file right after the agent's edit lands in it (`agent/saveDocuments`).
// A buffer that held the user's own unsaved typing when the edit began is not saved then:
// saving it would write that typing to disk too. It is saved before a command runs, as
// documented. No `vscode` import: tested directly.
import type { AgentEventParams } from "./protocol";

/** Tools whose call ends with the edited file being saved. */
const EDIT_TOOLS = new Set(["edit_file", "write_file"]);

export class SaveGuard {
  /** uri → the edit calls during which it is not to be saved. */
  private readonly held = new Map<string, Set<string>>();

  /**
   * @param dirtyUris the URIs of open documents with unsaved changes, right now
   * @param tell shows the user a short note
   * @param normalize the form of a URI the server sent that `dirtyUris` uses
   */
  constructor(
    private readonly dirtyUris: () => string[],
    private readonly tell: (message: string) => void,
    private readonly normalize: (uri: string) => string = (uri) => uri,
  ) {}

  /** The agent's events: an edit call holds the dirty buffers until its result. */
  handle(event: AgentEventParams): void {
    if (event.kind === "tool-call" && EDIT_TOOLS.has(event.tool)) {
      for (const uri of this.dirtyUris()) {
        this.hold(event.callId, uri);
      }
    } else if (event.kind === "tool-result") {
      this.release(event.callId);
    } else if (event.kind === "run-finished") {
      this.held.clear(); // a run that ended mid-call sends no result for it
    }
  }

  /** The user allowed an edit of `uri`: if its buffer is dirty now, keep it unsaved. */
  protect(callId: string, uri: string): void {
    if (this.dirtyUris().includes(this.normalize(uri))) {
      this.hold(callId, this.normalize(uri));
    }
  }

  /** The URIs of a save request that may be saved; the user is told about the others. */
  filter(uris: readonly string[]): string[] {
    const isHeld = (uri: string): boolean => this.held.has(this.normalize(uri));
    const kept = uris.filter((uri) => !isHeld(uri));
    for (const uri of uris.filter(isHeld)) {
      const name = decodeURIComponent(uri.slice(uri.lastIndexOf("/") + 1));
      this.tell(`Tether changed ${name}; not saved, as it holds your unsaved changes (undo: Ctrl+Z)`);
    }
    return kept;
  }

  private hold(callId: string, uri: string): void {
    const calls = this.held.get(uri) ?? new Set<string>();
    calls.add(callId);
    this.held.set(uri, calls);
  }

  private release(callId: string): void {
    for (const [uri, calls] of [...this.held]) {
      calls.delete(callId);
      if (calls.size === 0) {
        this.held.delete(uri);
      }
    }
  }
}
