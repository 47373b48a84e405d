// Inline review in the user's own editor: a proposed edit's hunks shown where they apply (old
// lines marked red as removed, the added lines as a green block below them — a comment thread,
// since the extension API cannot insert lines that are only seen), a CodeLens row per hunk
// "Accept | Reject" and the same on each block's title, the side-by-side diff one click away.
// The buffer is untouched until the verdict.
import * as vscode from "vscode";
import {
  BLOCK_COMMANDS,
  HUNK_COMMANDS,
  Review,
  ReviewCallbacks,
  ReviewTarget,
  reviewBlocks,
  reviewLenses,
  reviewMarks,
} from "./review";

/** The comment controller's id: the `commentController` of the blocks' menu `when` clauses. */
export const BLOCKS_CONTROLLER_ID = "tether-review";

export const REVIEW_CONTEXT_KEY = "tether.reviewInFile";
const NO_REVIEW_NOTE = "Tether: no change under review in this file";
const STOPPED_NOTE =
  "Tether: you changed lines under review; it goes on in the diff editor (Allow / Deny in its title)";

function sameUri(a: vscode.Uri, b: vscode.Uri): boolean {
  return a.toString() === b.toString();
}

/** The reviews in progress, their CodeLens rows, decorations and commands. */
export class InlineReviews implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly reviews = new Map<string, Review>();
  private readonly lensChanges = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensChanges.event;
  private readonly changes = new vscode.EventEmitter<void>();
  /** A review started, ended or a change in it was decided. */
  readonly onDidChange = this.changes.event;
  private readonly removed = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor("diffEditor.removedLineBackground"),
    overviewRulerColor: new vscode.ThemeColor("editorOverviewRuler.deletedForeground"),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
    textDecoration: "line-through",
  });
  // Accepted: the old lines stay struck through, without the red of a pending change.
  private readonly accepted = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    opacity: "0.6",
    textDecoration: "line-through",
  });
  private readonly added = vscode.window.createTextEditorDecorationType({});
  /** The added lines' blocks: one comment thread per hunk, by `${reviewId}#${index}`. */
  private readonly blocks = vscode.comments.createCommentController(BLOCKS_CONTROLLER_ID, "Tether review");
  private readonly threads = new Map<string, vscode.CommentThread>();
  /**
   * The blocks are comment threads, and VS Code opens its Comments view the first time a file
   * with comments is active in a window (`comments.openView` "firstFile", the default): the
   * panel it opened for the first review is closed when the reviews end, not left open, empty.
   */
  private commentsView: "not yet" | "opened by a review" | "left to the user" = "not yet";
  private readonly registrations: vscode.Disposable[];

  constructor() {
    const command = (id: string, run: (review: Review, ...args: number[]) => void): vscode.Disposable =>
      vscode.commands.registerCommand(id, (reviewId: unknown, ...args: unknown[]) => {
        const review = this.reviews.get(String(reviewId));
        if (review !== undefined) {
          run(review, ...args.map(Number));
          this.refresh();
        }
      });
    const all = (review: Review): number[] => review.hunks.map((_, index) => index);
    // From a CodeLens: (reviewId, index). From a key (no arguments): the change at the
    // cursor in the active editor, else the next one below it.
    const perHunk = (id: string, choice: boolean): vscode.Disposable =>
      vscode.commands.registerCommand(id, (reviewId?: unknown, index?: unknown) => {
        if (reviewId !== undefined) {
          this.reviews.get(String(reviewId))?.choose([Number(index)], choice);
        } else {
          const found = this.atCursor();
          const at = found?.review.hunkAt(found.line) ?? -1;
          if (found === undefined || at < 0) {
            vscode.window.setStatusBarMessage(NO_REVIEW_NOTE, 3000);
            return;
          }
          found.review.choose([at], choice);
          if (!found.review.decided) {
            this.reveal(found.editor, found.review, found.review.hunkAt(found.review.linesOf(at).last));
          }
        }
        this.refresh();
      });
    const move = (id: string, direction: 1 | -1): vscode.Disposable =>
      vscode.commands.registerCommand(id, () => {
        const found = this.atCursor();
        const to = found?.review.step(found.line, direction) ?? -1;
        if (found === undefined || to < 0) {
          vscode.window.setStatusBarMessage(NO_REVIEW_NOTE, 3000);
          return;
        }
        this.reveal(found.editor, found.review, to);
      });
    // From a block's title: the thread it was clicked on.
    const block = (id: string, choice: boolean | undefined): vscode.Disposable =>
      vscode.commands.registerCommand(id, (thread: unknown) => {
        const key = [...this.threads].find(([, known]) => known === thread)?.[0];
        const [reviewId, index] = key === undefined ? [] : key.split("#");
        const review = reviewId === undefined ? undefined : this.reviews.get(reviewId);
        if (review !== undefined) {
          review.choose([Number(index)], choice);
          this.refresh();
        }
      });
    this.registrations = [
      vscode.languages.registerCodeLensProvider({ scheme: "file" }, this),
      block(BLOCK_COMMANDS.accept, true),
      block(BLOCK_COMMANDS.reject, false),
      block(BLOCK_COMMANDS.undo, undefined),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration("comments.visible")) {
          this.decorate();
        }
      }),
      perHunk(HUNK_COMMANDS.accept, true),
      perHunk(HUNK_COMMANDS.reject, false),
      move(HUNK_COMMANDS.next, 1),
      move(HUNK_COMMANDS.previous, -1),
      command(HUNK_COMMANDS.undo, (review, index) => review.choose([index], undefined)),
      command(HUNK_COMMANDS.acceptAll, (review) => review.choose(all(review), true)),
      command(HUNK_COMMANDS.rejectAll, (review) => review.choose(all(review), false)),
      command(HUNK_COMMANDS.openDiff, (review) => review.openDiff()),
      vscode.workspace.onDidChangeTextDocument((event) => this.follow(event)),
      vscode.window.onDidChangeVisibleTextEditors(() => this.decorate()),
    ];
  }

  /** Starts reviewing `target` in its editor (opened when needed); dispose the result to end it. */
  async start(id: string, target: ReviewTarget, callbacks: ReviewCallbacks): Promise<Review> {
    const review = new Review(id, target, callbacks);
    this.reviews.set(id, review);
    const document = await vscode.workspace.openTextDocument(target.uri);
    await vscode.window.showTextDocument(document, { preview: false });
    this.refresh();
    return review;
  }

  /** The review of the active editor's file and the cursor's line, if any. */
  private atCursor(): { editor: vscode.TextEditor; review: Review; line: number } | undefined {
    const editor = vscode.window.activeTextEditor;
    if (editor === undefined) {
      return undefined;
    }
    const review = [...this.reviews.values()].find((r) => sameUri(r.target.uri, editor.document.uri));
    return review === undefined ? undefined : { editor, review, line: editor.selection.active.line };
  }

  /** Puts the cursor on a change and scrolls it into view. */
  private reveal(editor: vscode.TextEditor, review: Review, index: number): void {
    if (index < 0) {
      return;
    }
    const line = Math.min(review.lineOf(index), Math.max(editor.document.lineCount - 1, 0));
    const at = new vscode.Position(line, 0);
    editor.selection = new vscode.Selection(at, at);
    editor.revealRange(new vscode.Range(at, at), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }

  /** A review's progress ("1 of 2 accepted"), if `id` is under review. */
  progress(id: string): string | undefined {
    return this.reviews.get(id)?.progress();
  }

  /** Ends a review: its lenses and marks go away. */
  end(id: string): void {
    if (this.reviews.delete(id)) {
      this.refresh();
    }
  }

  has(id: string): boolean {
    return this.reviews.has(id);
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const lenses: vscode.CodeLens[] = [];
    for (const review of this.reviews.values()) {
      if (sameUri(review.target.uri, document.uri)) {
        for (const lens of reviewLenses(review)) {
          // Never past the last line (a row there would not show).
          const line = Math.max(Math.min(lens.line, document.lineCount - 1), 0);
          const range = new vscode.Range(line, 0, line, 0);
          lenses.push(
            new vscode.CodeLens(range, {
              title: lens.title,
              command: lens.command,
              arguments: lens.arguments,
            }),
          );
        }
      }
    }
    return lenses;
  }

  dispose(): void {
    this.reviews.clear();
    for (const thread of this.threads.values()) {
      thread.dispose();
    }
    this.threads.clear();
    this.blocks.dispose();
    for (const registration of this.registrations) {
      registration.dispose();
    }
    this.removed.dispose();
    this.accepted.dispose();
    this.added.dispose();
    this.lensChanges.dispose();
    this.changes.dispose();
  }

  private refresh(): void {
    void vscode.commands.executeCommand("setContext", REVIEW_CONTEXT_KEY, this.reviews.size > 0);
    this.lensChanges.fire();
    this.changes.fire();
    this.decorate();
    this.showBlocks();
    if (this.reviews.size === 0 && this.commentsView === "opened by a review") {
      this.commentsView = "left to the user";
      void vscode.commands.executeCommand("workbench.action.closePanel");
    }
  }

  /** Brings the blocks in line with the reviews: new ones made, moved ones moved, stale ones disposed. */
  private showBlocks(): void {
    const wanted = new Set<string>();
    for (const review of this.reviews.values()) {
      for (const block of reviewBlocks(review)) {
        const key = `${review.id}#${block.index}`;
        wanted.add(key);
        const range = new vscode.Range(block.line, 0, block.line, 0);
        const body = new vscode.MarkdownString(block.body);
        const comment: vscode.Comment = {
          author: { name: "Tether" },
          body,
          mode: vscode.CommentMode.Preview,
          contextValue: block.state,
        };
        let thread = this.threads.get(key);
        if (thread === undefined) {
          if (this.commentsView === "not yet") {
            const openView = vscode.workspace
              .getConfiguration("comments")
              .get<string>("openView", "firstFile");
            this.commentsView = openView === "firstFile" ? "opened by a review" : "left to the user";
          }
          thread = this.blocks.createCommentThread(review.target.uri, range, [comment]);
          thread.canReply = false;
          this.threads.set(key, thread);
        } else {
          if (thread.range === undefined || thread.range.start.line !== block.line) {
            thread.range = range;
          }
          thread.comments = [comment];
        }
        if (thread.contextValue !== block.state) {
          // Set on a change only: setting it again would open a block the user folded.
          thread.collapsibleState = block.expanded
            ? vscode.CommentThreadCollapsibleState.Expanded
            : vscode.CommentThreadCollapsibleState.Collapsed;
        }
        thread.label = block.label;
        thread.contextValue = block.state;
      }
    }
    for (const [key, thread] of [...this.threads]) {
      if (!wanted.has(key)) {
        thread.dispose();
        this.threads.delete(key);
      }
    }
  }

  /** Marks every visible editor of a file under review (decorations belong to an editor). */
  private decorate(): void {
    // The added lines are blocks below the old ones; with `comments.visible` off those are
    // hidden, and the added text goes back to the end of the old lines.
    const addedInline = vscode.workspace.getConfiguration("comments").get<boolean>("visible", true) === false;
    for (const editor of vscode.window.visibleTextEditors) {
      const removed: vscode.DecorationOptions[] = [];
      const accepted: vscode.DecorationOptions[] = [];
      const added: vscode.DecorationOptions[] = [];
      for (const review of this.reviews.values()) {
        if (!sameUri(review.target.uri, editor.document.uri)) {
          continue;
        }
        const marks = reviewMarks(review);
        for (const mark of marks.removed) {
          (mark.accepted ? accepted : removed).push({ range: new vscode.Range(mark.line, 0, mark.line, 0) });
        }
        for (const mark of addedInline ? marks.added : []) {
          const hover = new vscode.MarkdownString();
          hover.appendText(mark.accepted ? "Accepted by you:\n" : "Proposed by Tether:\n");
          hover.appendCodeblock(mark.full, editor.document.languageId);
          const at = mark.atEnd ? Number.MAX_SAFE_INTEGER : 0;
          const decoration = {
            contentText: `${mark.accepted ? "  ✓ " : "  → "}${mark.text}`,
            color: new vscode.ThemeColor("gitDecoration.addedResourceForeground"),
            backgroundColor: new vscode.ThemeColor("diffEditor.insertedTextBackground"),
            margin: "0 0 0 1em",
          };
          added.push({
            range: new vscode.Range(mark.line, at, mark.line, at),
            hoverMessage: hover,
            renderOptions: mark.atEnd ? { after: decoration } : { before: decoration },
          });
        }
      }
      editor.setDecorations(this.removed, removed);
      editor.setDecorations(this.accepted, accepted);
      editor.setDecorations(this.added, added);
    }
  }

  /** The user typed: reviews below move along; one whose lines changed goes to the diff editor. */
  private follow(event: vscode.TextDocumentChangeEvent): void {
    let changed = false;
    for (const review of [...this.reviews.values()]) {
      if (!sameUri(review.target.uri, event.document.uri)) {
        continue;
      }
      // Changes come last-first within one event: each applies to the text before it.
      const kept = [...event.contentChanges]
        .sort((a, b) => b.range.start.line - a.range.start.line)
        .every((change) => review.follow(change));
      changed = true;
      if (!kept) {
        this.reviews.delete(review.id);
        void vscode.window.showWarningMessage(STOPPED_NOTE);
        review.openDiff();
      }
    }
    if (changed) {
      this.refresh();
    }
  }
}
