// The wiring of Tether: Rewind… (src/rewind.ts): its requests on the running server, and
// which session it rewinds — the one given (`{sessionId, runId}`, as a message's "Restore
// checkpoint" passes it), else the session of the last run in this window.
import type { TetherProtocol } from "./protocolClient";
import type { RewindEndpoint } from "./rewind";

/** The requests of a rewind, sent to the server (started when needed). */
export function rewindEndpoint(connect: () => Promise<TetherProtocol>): RewindEndpoint {
  return {
    checkpoints: async (sessionId) => (await connect()).checkpoints(sessionId),
    rewind: async (params) => (await connect()).rewind(params),
  };
}

/** The session (and run) the command was given, else the last session this window ran. */
export function rewindTarget(
  target: unknown,
  runs: { book: { sessions: ReadonlyArray<{ sessionId: string }> } },
): [string | undefined, { runId?: string }] {
  const given = typeof target === "object" && target !== null ? (target as Record<string, unknown>) : {};
  if (typeof given.sessionId === "string" && given.sessionId !== "") {
    return [given.sessionId, typeof given.runId === "string" ? { runId: given.runId } : {}];
  }
  return [runs.book.sessions[0]?.sessionId, {}];
}
