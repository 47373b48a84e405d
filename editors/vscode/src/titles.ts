// An approval's title as a headline and a muted reason. The server joins them with " — "
// (`Run npm install — outside the sandbox: in it, it needs the network (…)`, or a sensitive
// path's floor); the panel's card and the command dialog show the headline bold, the
// reason apart. No `vscode` import: tested directly.

const SANDBOX_STOPPED = /^outside the sandbox: in it, /;

export interface SplitTitle {
  readonly headline: string;
  readonly reason?: string;
}

export function splitTitle(title: string): SplitTitle {
  const at = title.indexOf(" — ");
  if (at < 0) {
    return { headline: title };
  }
  const headline = title.slice(0, at);
  const rest = title.slice(at + " — ".length);
  if (SANDBOX_STOPPED.test(rest)) {
    return {
      headline: `${headline} outside the sandbox?`,
      reason: `The sandbox stopped it: ${rest.replace(SANDBOX_STOPPED, "")}`,
    };
  }
  return { headline, reason: rest };
}
