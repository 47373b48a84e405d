// The agent panel's webview: draws the state the extension posts and sends the user's
// actions back. It builds the DOM with createElement/textContent; the only HTML it sets is
// the assistant's Markdown, rendered and escaped by the extension (src/panel/markdown.ts).
// Elements are kept by key (run, call, approval) so that streaming does not reset what the
// user opened, typed or focused.
/* global acquireVsCodeApi, document, window */
(function () {
  "use strict";
  const vscode = acquireVsCodeApi();
  const $ = (id) => document.getElementById(id);
  const send = (message) => vscode.postMessage(message);
  let state = { runs: [], approvals: [], sessions: [], rules: [] };

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "text") {
        node.textContent = value;
      } else if (key === "class") {
        node.className = value;
      } else if (key.startsWith("on")) {
        node.addEventListener(key.slice(2), value);
      } else if (value !== undefined && value !== false) {
        node.setAttribute(key, value === true ? "" : value);
      }
    }
    for (const child of children || []) {
      if (child) {
        node.appendChild(child);
      }
    }
    return node;
  }

  function keyed(container, selector, key, create) {
    for (const child of container.querySelectorAll(`:scope > ${selector}`)) {
      if (child.dataset.key === key) {
        return child;
      }
    }
    const node = create();
    node.dataset.key = key;
    container.appendChild(node);
    return node;
  }

  function prune(container, selector, keys) {
    for (const child of [...container.querySelectorAll(`:scope > ${selector}`)]) {
      if (!keys.has(child.dataset.key)) {
        child.remove();
      }
    }
  }

  function setText(node, text) {
    if (node.textContent !== text) {
      node.textContent = text;
    }
  }

  const STATUS = {
    running: "running",
    awaiting: "waiting for you",
    ok: "done",
    failed: "failed",
    denied: "denied",
    stopped: "not run",
  };

  function drawCard(container, card) {
    const node = keyed(container, "details.tool", card.callId, () =>
      el("details", { class: "tool" }, [
        el("summary", {}, [
          el("span", { class: "tool-title" }),
          el("span", { class: "tool-stat" }),
          el("span", { class: "badge" }),
        ]),
        el("pre", { class: "tool-detail" }),
        el("div", { class: "tool-decision" }),
        el("div", { class: "tool-sandbox" }),
        el("pre", { class: "tool-output" }),
      ]),
    );
    node.dataset.status = card.status;
    setText(node.querySelector(".tool-title"), card.title);
    const badge = card.progress ? `${STATUS.running} · ${card.progress}` : STATUS[card.status];
    setText(node.querySelector(".badge"), badge || card.status);
    const detail = node.querySelector(".tool-detail");
    if (card.stat) {
      detail.classList.add("diff");
      drawDiff(detail, card.detail);
      const stat = node.querySelector(".tool-stat");
      if (stat.dataset.stat !== `${card.stat.added}/${card.stat.removed}`) {
        stat.dataset.stat = `${card.stat.added}/${card.stat.removed}`;
        stat.replaceChildren(statPill(card.stat));
      }
    } else {
      setText(detail, card.detail);
    }
    setText(node.querySelector(".tool-decision"), card.decision ? `approval: ${card.decision}` : "");
    const sandbox = node.querySelector(".tool-sandbox");
    setText(sandbox, card.sandbox || "");
    sandbox.hidden = !card.sandbox;
    const output = node.querySelector(".tool-output");
    setText(output, card.output || "");
    output.hidden = !card.output;
    return node;
  }

  /** The parts of a run's items: the answer's text, the thinking, the tool cards. */
  const SECTIONS = "div.answer, details.thinking, details.tool";

  function drawRun(container, run) {
    const node = keyed(container, "article", run.runId, () =>
      el("article", { class: "run" }, [
        el("div", { class: "prompt" }),
        el("div", { class: "rewound-label" }),
        el("div", { class: "chips run-context", role: "group", "aria-label": "Context this run carried" }),
        el("ol", { class: "plan", "aria-label": "Plan" }),
        el("div", { class: "items" }),
        el("div", { class: "outcome", role: "status" }),
        el("div", { class: "changed" }),
        el("div", { class: "error", role: "alert" }, [
          el("span", { class: "error-text" }),
          el("button", {
            type: "button",
            class: "secondary fix",
            onclick: () => send({ type: "fix", runId: run.runId }),
          }),
        ]),
        el("div", { class: "undone" }),
        el("div", { class: "row run-actions" }, [
          el("button", {
            type: "button",
            class: "secondary run-undo",
            text: "Undo this run",
            title: "Revert the files this run changed (agent/undo)",
            onclick: () => send({ type: "undo", runId: run.runId }),
          }),
          el("button", {
            type: "button",
            class: "secondary run-restore",
            text: "Restore checkpoint",
            title: "Go back to before this run: its files, the conversation or both (agent/rewind)",
            onclick: () => send({ type: "restore", runId: run.runId }),
          }),
        ]),
      ]),
    );
    node.dataset.running = run.running ? "true" : "false";
    setText(node.querySelector(".prompt"), run.prompt);
    // A conversation rewind left it (or its steps from one on) out: greyed and said.
    const rewound = run.rewound;
    node.classList.toggle("rewound", Boolean(rewound && rewound.whole));
    const rewoundLabel = node.querySelector(".rewound-label");
    setText(rewoundLabel, rewound ? rewound.label : "");
    rewoundLabel.hidden = !rewound;
    const rewoundFrom = rewound ? rewound.fromItem : run.items.length;
    const items = node.querySelector(".items");
    const keys = new Set();
    run.items.forEach((item, index) => {
      if (item.kind === "text") {
        const key = `text-${index}`;
        keys.add(key);
        const text = keyed(items, SECTIONS, key, () => el("div", { class: "answer markdown" }));
        if (text.dataset.html !== item.html) {
          text.innerHTML = item.html; // escaped and built by the extension's renderer
          text.dataset.html = item.html;
        }
        text.classList.toggle("rewound", index >= rewoundFrom);
      } else if (item.kind === "thinking") {
        // The model's thinking: collapsed (the user may open it; keyed, so it stays open as
        // it streams), its text as text (escaped by the extension, never HTML).
        const key = `thinking-${index}`;
        keys.add(key);
        const node = keyed(items, SECTIONS, key, () =>
          el("details", { class: "thinking" }, [el("summary", {}), el("pre", { class: "thinking-text" })]),
        );
        setText(node.querySelector("summary"), `Thinking (${item.words} word${item.words === 1 ? "" : "s"})`);
        setText(node.querySelector(".thinking-text"), item.text);
        node.classList.toggle("rewound", index >= rewoundFrom);
      } else {
        keys.add(item.card.callId);
        drawCard(items, item.card).classList.toggle("rewound", index >= rewoundFrom);
      }
    });
    prune(items, SECTIONS, keys);
    setText(node.querySelector(".outcome"), run.running ? "running…" : run.summary);
    node.querySelector(".outcome").dataset.outcome = run.outcome || "";
    setText(
      node.querySelector(".changed"),
      run.changedFiles && run.changedFiles.length ? `changed: ${run.changedFiles.join(", ")}` : "",
    );
    setText(node.querySelector(".error-text"), run.error || "");
    node.querySelector(".error").hidden = !run.error;
    const fix = node.querySelector("button.fix");
    setText(fix, run.fix || "");
    fix.hidden = !run.fix;
    setText(node.querySelector(".undone"), run.undone ? `Undone: ${run.undone}` : "");
    node.querySelector(".run-undo").hidden = state.undoRunId !== run.runId;
    node.querySelector(".run-restore").hidden = run.running || !run.sessionId;
    drawChips(node.querySelector(".run-context"), run.context || [], false);
    drawPlan(node.querySelector("ol.plan"), run.plan || []);
  }

  /** A session command typed in the prompt box (`/cost`) and what it answered. */
  function drawCommand(container, entry) {
    const node = keyed(container, "article", entry.runId, () =>
      el("article", { class: "command" }, [
        el("div", { class: "prompt command-input" }),
        el("pre", { class: "command-output", role: "status" }),
      ]),
    );
    node.dataset.failed = entry.command.failed ? "true" : "false";
    setText(node.querySelector(".command-input"), entry.prompt);
    setText(node.querySelector(".command-output"), entry.command.message);
  }

  const PLAN_MARK = { pending: "☐", in_progress: "◐", completed: "☑" };
  const PLAN_STATUS = { pending: "to do", in_progress: "in progress", completed: "done" };

  /** The model's step list as a checklist at the top of the run. */
  function drawPlan(list, steps) {
    const key = JSON.stringify(steps);
    if (list.dataset.plan === key) {
      return;
    }
    list.dataset.plan = key;
    const done = steps.filter((step) => step.status === "completed").length;
    list.setAttribute("aria-label", `Plan: ${done} of ${steps.length} done`);
    list.replaceChildren(
      ...steps.map((step) =>
        el("li", { class: `plan-step ${step.status}`, "data-status": step.status }, [
          el("span", { class: "plan-mark", text: PLAN_MARK[step.status] || "☐", "aria-hidden": "true" }),
          el("span", { class: "plan-text", text: step.content }),
          el("span", { class: "visually-hidden", text: ` (${PLAN_STATUS[step.status] || step.status})` }),
          step.priority === "high" ? el("span", { class: "plan-priority", text: "high" }) : undefined,
        ]),
      ),
    );
    list.hidden = steps.length === 0;
  }

  /** Context chips: `app.py`, `app.py:4–6` (its text on hover and when opened), `3 open files`. */
  function drawChips(container, chips, toggles) {
    const key = JSON.stringify(chips);
    if (container.dataset.chips === key) {
      return;
    }
    container.dataset.chips = key;
    container.replaceChildren(
      ...chips.map((chip) => {
        const label = el("span", { class: "chip-label", text: chip.label });
        if (!toggles) {
          return chip.detail
            ? el("details", { class: `chip ${chip.part}`, "data-part": chip.part, title: chip.detail }, [
                el("summary", {}, [label]),
                el("pre", { class: "chip-detail", text: chip.detail }),
              ])
            : el("span", { class: `chip ${chip.part}`, "data-part": chip.part }, [label]);
        }
        return el(
          "button",
          {
            type: "button",
            class: `chip ${chip.part}${chip.included ? "" : " left-out"}`,
            "data-part": chip.part,
            "aria-pressed": chip.included ? "true" : "false",
            title: `${chip.detail ? `${chip.detail}\n\n` : ""}${chip.included ? "Sent with the prompt: click to leave it out" : "Left out: click to send it"}`,
            onclick: () => send({ type: "toggleContext", part: chip.part }),
          },
          [label],
        );
      }),
    );
    container.hidden = chips.length === 0;
  }

  function answerButton(label, callId, build, className) {
    return el("button", {
      type: "button",
      class: className,
      text: label,
      onclick: (event) => {
        const card = event.target.closest(".approval");
        card.querySelectorAll("button").forEach((b) => (b.disabled = true));
        send({ type: "approve", callId, answer: build(card) });
      },
    });
  }

  /** A unified diff (or `-`/`+` lines) as coloured lines: removed red, added green. */
  function drawDiff(node, diff) {
    if (node.dataset.diff === diff) {
      return;
    }
    node.dataset.diff = diff;
    const lines = diff.replace(/\n$/, "").split("\n");
    node.replaceChildren(
      ...lines
        .filter((line) => !line.startsWith("--- ") && !line.startsWith("+++ "))
        .map((line) => {
          const kind = line.startsWith("@@")
            ? "hunk"
            : line.startsWith("+")
              ? "add"
              : line.startsWith("-")
                ? "del"
                : line.startsWith("… ")
                  ? "hunk"
                  : "ctx";
          return el("div", { class: `line ${kind}`, text: line === "" ? " " : line });
        }),
    );
  }

  /** "+3 −1" as a pill. */
  function statPill(stat) {
    return el("span", { class: "stat", title: `${stat.added} lines added, ${stat.removed} removed` }, [
      el("span", { class: "stat-add", text: `+${stat.added}` }),
      el("span", { class: "stat-del", text: `−${stat.removed}` }),
    ]);
  }

  // The same call asked again (the sandbox's walls stopped it) has a new title: a new card.
  const approvalKey = (approval) => `${approval.callId}\n${approval.title}\n${approval.reason || ""}`;

  const WHERE = {
    none: "",
    dialog: "also asked in a dialog",
    "diff editor": "also in the diff editor",
    file: "under review in the file",
  };

  function drawApproval(container, approval) {
    const node = keyed(container, "section.approval", approvalKey(approval), () => {
      const isCommand = approval.kind === "command";
      // A textarea: its placeholder wraps in a narrow panel instead of being cut.
      const feedback = el("textarea", {
        class: "feedback",
        rows: "2",
        placeholder: "Feedback with Deny (optional): why, or what to do instead",
        "aria-label": "Feedback with Deny",
      });
      // A shell command can be changed before it is allowed; an MCP call is shown as is.
      const command = !isCommand
        ? undefined
        : approval.editable
          ? el("textarea", {
              class: "command",
              rows: "2",
              "aria-label": "Command to run (you can change it)",
            })
          : el("pre", { class: "call", text: approval.subject });
      if (command && approval.editable) {
        command.value = approval.subject;
      }
      const suggestions = approval.suggestions || [];
      const scope = suggestions.length
        ? el("select", { class: "scope", "aria-label": "Always allow: remember for" }, [
            el("option", { value: "session", text: "this session" }),
            el("option", { value: "project", text: "this project" }),
            el("option", { value: "user", text: "all my projects" }),
          ])
        : undefined;
      const edited = (card) => {
        const value = card.querySelector(".command");
        return value && value.value !== approval.subject ? { command: value.value } : {};
      };
      const rule = (pattern) => (card) => ({
        choice: "allow-always",
        ...edited(card),
        rule: { pattern, scope: card.querySelector(".scope").value },
      });
      // The server's rules, narrowest first, as plain secondary buttons (the pattern in the
      // editor font); none offered: a plain Allow Always, as before.
      const always = suggestions.length
        ? el("div", { class: "row always", role: "group", "aria-label": "Allow always" }, [
            ...suggestions.map((pattern) => {
              const button = answerButton("", approval.callId, rule(pattern), "secondary always-allow");
              // An MCP call (a command shown as is) is offered `*`: every call of its tool.
              const everyCall = isCommand && !approval.editable && pattern === "*";
              button.replaceChildren(
                ...(everyCall
                  ? [document.createTextNode("Always allow every call of this tool")]
                  : [
                      document.createTextNode("Always allow "),
                      el("span", { class: "pattern", text: pattern }),
                    ]),
              );
              button.dataset.pattern = pattern;
              button.title = `Allow this and every later call that ${pattern} matches, without asking`;
              return button;
            }),
            el("label", { class: "muted always-scope" }, [document.createTextNode("for "), scope]),
          ])
        : undefined;
      return el("section", { class: "approval", role: "group", "aria-label": approval.title }, [
        el("div", { class: "approval-head" }, [
          el("span", { class: "approval-title", text: approval.title }),
          el("span", { class: "muted approval-where" }),
        ]),
        approval.reason ? el("div", { class: "muted approval-reason", text: approval.reason }) : undefined,
        isCommand
          ? command
          : el("div", { class: "file-pill" }, [
              el("span", { class: "file-name", text: approval.subject }),
              approval.stat ? statPill(approval.stat) : undefined,
            ]),
        isCommand ? undefined : el("pre", { class: "diff" }),
        isCommand && approval.cwd ? el("div", { class: "cwd", text: `in ${approval.cwd}` }) : undefined,
        el("div", { class: "row" }, [
          answerButton("Allow", approval.callId, (card) => ({ choice: "allow", ...edited(card) }), "primary"),
          always
            ? undefined
            : answerButton(
                "Allow Always",
                approval.callId,
                (card) => ({ choice: "allow-always", ...edited(card) }),
                "secondary",
              ),
          answerButton(
            "Deny",
            approval.callId,
            (card) => ({ choice: "deny", feedback: card.querySelector(".feedback").value }),
            "secondary deny",
          ),
          isCommand || approval.alsoIn === "none" || approval.editable === false
            ? undefined
            : el("button", {
                type: "button",
                class: "secondary reveal",
                text: "Edit in Diff Editor",
                title: "Change the proposed text in the diff editor, then Allow",
                onclick: () => send({ type: "reveal", callId: approval.callId }),
              }),
        ]),
        always,
        feedback,
      ]);
    });
    // What changes while it waits: where else it is shown, the per-change progress.
    const where = node.querySelector(".approval-where");
    setText(where, [WHERE[approval.alsoIn] || "", approval.progress || ""].filter(Boolean).join(" · "));
    where.hidden = where.textContent === "";
    const diff = node.querySelector("pre.diff");
    if (diff) {
      drawDiff(diff, approval.diff || "");
    }
    const reveal = node.querySelector("button.reveal");
    if (reveal) {
      reveal.hidden = approval.alsoIn !== "diff editor";
    }
    return node;
  }

  function ruleText(rule) {
    return `${rule.decision} ${rule.tool}: ${rule.pattern}`;
  }

  function draw() {
    // Follow the stream while the user is at the bottom; leave them where they scrolled to.
    const atBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
    const runs = $("runs");
    for (const run of state.runs) {
      if (run.command) {
        drawCommand(runs, run);
      } else {
        drawRun(runs, run);
      }
    }
    prune(runs, "article", new Set(state.runs.map((r) => r.runId)));

    const approvals = $("approvals");
    const shown = new Set([...approvals.children].map((child) => child.dataset.key));
    let arrived;
    for (const approval of state.approvals) {
      const card = drawApproval(approvals, approval);
      arrived = shown.has(approvalKey(approval)) ? arrived : card;
    }
    prune(approvals, "section.approval", new Set(state.approvals.map(approvalKey)));

    const notice = $("notice");
    setText(notice, state.notice || "");
    notice.hidden = !state.notice;

    const running = state.activeRunId !== undefined;
    $("send").disabled = running;
    $("cancel").hidden = !running;
    $("undo").hidden = running || !state.undoRunId;
    setText(
      $("session-label"),
      state.sessionId ? `Continuing: ${state.sessionTitle || state.sessionId}` : "New session",
    );
    $("new-session").hidden = !state.sessionId;

    const sessions = $("sessions");
    sessions.replaceChildren(
      ...state.sessions.map((s) =>
        el("li", {}, [
          el("button", {
            type: "button",
            class: s.sessionId === state.sessionId ? "link current" : "link",
            text: s.title || s.sessionId,
            title: `${s.sessionId} · ${s.runs} run${s.runs === 1 ? "" : "s"} · ${s.updatedAt}`,
            onclick: () => send({ type: "pickSession", sessionId: s.sessionId }),
          }),
          el("span", {
            class: "muted",
            text: ` ${s.runs} run${s.runs === 1 ? "" : "s"}${s.lastOutcome ? ` · ${s.lastOutcome}` : ""}`,
          }),
        ]),
      ),
    );
    if (state.sessions.length === 0) {
      sessions.replaceChildren(el("li", { class: "muted", text: "No sessions yet." }));
    }

    const rules = $("rules");
    const ruleItem = (view) =>
      el("li", { class: "rule" }, [
        el("code", { text: ruleText(view.rule) }),
        el("span", { class: "muted", text: ` ${view.rule.scope || "session"} ` }),
        view.removable
          ? el("button", {
              type: "button",
              class: "secondary revoke",
              text: "Revoke",
              "aria-label": `Revoke ${ruleText(view.rule)} (${view.rule.scope || "session"})`,
              onclick: () => send({ type: "revokeRule", rule: view.rule }),
            })
          : undefined,
      ]);
    const own = state.rules.filter((view) => view.removable);
    const builtin = state.rules.filter((view) => !view.removable);
    const builtinOpen = rules.querySelector("details.builtin[open]") !== null;
    const ruleNodes = [
      ...(own.length ? own.map(ruleItem) : [el("li", { class: "muted", text: "No rules of yours." })]),
      builtin.length
        ? el("li", {}, [
            el("details", { class: "builtin", open: builtinOpen }, [
              el("summary", {
                text: `${builtin.length} built-in read-only rules (turned off in your rules.toml: read_only_defaults = false)`,
              }),
              el("ul", {}, builtin.map(ruleItem)),
            ]),
          ])
        : undefined,
    ];
    rules.replaceChildren(...ruleNodes.filter(Boolean));
    drawChips($("context-chips"), state.context || [], true);
    if (completing === "command" && !mentions.hidden) {
      const query = commandQuery();
      if (query !== undefined) {
        drawCommands(query); // the server's commands may have come since `/` was typed
      }
    }
    const empty = $("empty");
    if (empty) {
      empty.hidden = state.runs.length > 0;
    }
    vscode.setState({ prompt: $("prompt").value });
    if (arrived) {
      arrived.scrollIntoView({ block: "nearest" }); // a new approval is never out of sight
    } else if (atBottom) {
      window.scrollTo(0, document.body.scrollHeight);
    }
  }

  const prompt = $("prompt");
  const submit = () => {
    const text = prompt.value.trim();
    if (text === "" || state.activeRunId !== undefined) {
      return;
    }
    send({ type: "run", prompt: text });
    prompt.value = "";
    closeMentions();
    vscode.setState({ prompt: "" });
  };
  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    submit();
  });
  prompt.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      submit();
    }
  });
  // Completion in the prompt box: the word typed after an @ asks the extension for matching
  // files; a / at the start lists the session commands (the state has them).
  const mentions = $("mentions");
  let mentionAt = -1;
  let completing = "file"; // or "command"
  let picked = 0;
  const mentionQuery = () => {
    const before = prompt.value.slice(0, prompt.selectionStart);
    const match = /(^|\s)@([^\s@]*)$/.exec(before);
    return match ? { at: before.length - match[2].length - 1, query: match[2] } : undefined;
  };
  const commandQuery = () => {
    const before = prompt.value.slice(0, prompt.selectionStart);
    const match = /^\/(\S*)$/.exec(before);
    return match && prompt.value.slice(prompt.selectionStart).trim() === "" ? match[1] : undefined;
  };
  const closeMentions = () => {
    mentions.hidden = true;
    mentions.replaceChildren();
    mentionAt = -1;
  };
  const choose = (item) => {
    if (item.dataset.command !== undefined) {
      const command = (state.commands || []).find((c) => c.name === item.dataset.command);
      prompt.value = `/${item.dataset.command}${command && command.argument ? " " : ""}`;
      prompt.setSelectionRange(prompt.value.length, prompt.value.length);
    } else {
      const name = item.dataset.file;
      const end = prompt.selectionStart;
      prompt.value = `${prompt.value.slice(0, mentionAt)}@${name} ${prompt.value.slice(end)}`;
      const caret = mentionAt + name.length + 2;
      prompt.setSelectionRange(caret, caret);
    }
    closeMentions();
    prompt.focus();
    vscode.setState({ prompt: prompt.value });
  };
  const highlight = () => {
    [...mentions.children].forEach((item, index) => {
      item.setAttribute("aria-selected", index === picked ? "true" : "false");
    });
  };
  const option = (attrs, children) =>
    el(
      "li",
      {
        role: "option",
        ...attrs,
        onmousedown: (event) => {
          event.preventDefault();
          choose(event.currentTarget);
        },
      },
      children,
    );
  function drawMentions(query, files) {
    const now = mentionQuery();
    if (!now || now.query !== query) {
      return; // typed on since
    }
    mentionAt = now.at;
    completing = "file";
    picked = 0;
    mentions.setAttribute("aria-label", "Files");
    mentions.replaceChildren(
      ...files.map((name) => option({ class: "mention", text: name, "data-file": name })),
    );
    mentions.hidden = files.length === 0;
    highlight();
  }
  function drawCommands(query) {
    const shown = (state.commands || []).filter((c) => c.name.startsWith(query));
    completing = "command";
    picked = 0;
    mentions.setAttribute("aria-label", "Session commands");
    mentions.replaceChildren(
      ...shown.map((c) =>
        option({ class: "command-option", "data-command": c.name, title: c.description }, [
          el("span", { class: "command-name", text: `/${c.name}${c.argument ? ` ${c.argument}` : ""}` }),
          el("span", { class: "muted", text: ` ${c.description}` }),
        ]),
      ),
    );
    mentions.hidden = shown.length === 0;
    highlight();
  }
  prompt.addEventListener("input", () => {
    vscode.setState({ prompt: prompt.value });
    const command = commandQuery();
    const now = mentionQuery();
    if (command !== undefined) {
      drawCommands(command);
    } else if (now) {
      send({ type: "files", query: now.query });
    } else {
      closeMentions();
    }
  });
  prompt.addEventListener(
    "keydown",
    (event) => {
      if (mentions.hidden) {
        return;
      }
      const count = mentions.children.length;
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        picked = (picked + (event.key === "ArrowDown" ? 1 : count - 1)) % count;
        highlight();
      } else if (event.key === "Tab" || (event.key === "Enter" && !isCompleteCommand())) {
        choose(mentions.children[picked]);
      } else if (event.key === "Escape") {
        closeMentions();
      } else {
        return;
      }
      event.preventDefault();
      event.stopImmediatePropagation();
    },
    true, // before the Enter that sends
  );
  /** `/cost` typed whole: Enter sends it rather than completing it again. */
  const isCompleteCommand = () =>
    completing === "command" && (state.commands || []).some((c) => prompt.value.trim() === `/${c.name}`);
  prompt.addEventListener("blur", () => window.setTimeout(closeMentions, 150));
  $("cancel").addEventListener("click", () => send({ type: "cancel" }));
  $("undo").addEventListener(
    "click",
    () => state.undoRunId && send({ type: "undo", runId: state.undoRunId }),
  );
  $("new-session").addEventListener("click", () => send({ type: "pickSession", sessionId: null }));
  $("refresh-sessions").addEventListener("click", () => send({ type: "refreshSessions" }));
  $("refresh-rules").addEventListener("click", () => send({ type: "refreshRules" }));
  window.addEventListener("message", (event) => {
    const message = event.data;
    if (message && message.type === "state") {
      state = message.state;
      draw();
    } else if (message && message.type === "files") {
      drawMentions(message.query, message.files);
    } else if (message && message.type === "restorePrompt" && prompt.value.trim() === "") {
      prompt.value = message.prompt; // it did not run: back in the box, nothing lost
      vscode.setState({ prompt: prompt.value });
    }
  });
  const saved = vscode.getState();
  if (saved && typeof saved.prompt === "string") {
    prompt.value = saved.prompt;
  }
  send({ type: "ready" });
})();
