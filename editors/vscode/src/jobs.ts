// "Tether: Show Job Output": the background jobs of this window's server (commands the model
// started with `bash`'s `background: true`, `agent/jobs`) in a quick pick; the one picked is
// followed in an output channel, `Tether job-1`, read with `agent/jobOutput` from where the
// last read ended until the job ends. Its toast's "Stop Job" stops it (`agent/jobStop`).
// The server escapes the output; the command line (the model's text) is escaped here.
import * as vscode from "vscode";
import { shownLine } from "./display";
import type {
  AgentJobOutputParams,
  AgentJobOutputResult,
  AgentJobsResult,
  AgentJobStopResult,
} from "./protocol";

export const SHOW_JOB_OUTPUT_COMMAND = "tether.showJobOutput";
const POLL_MS = 500;
const STOP = "Stop Job";

type JobInfo = AgentJobsResult["jobs"][number];

/** The requests the view makes (`TetherProtocol` answers them). */
export interface JobsEndpoint {
  jobs(): Promise<AgentJobsResult>;
  jobOutput(params: AgentJobOutputParams): Promise<AgentJobOutputResult>;
  jobStop(sessionId: string, jobId: string): Promise<AgentJobStopResult>;
}

interface View {
  channel: vscode.OutputChannel;
  ended: boolean;
}

function state(job: { state: string; exitCode?: number | null }): string {
  return job.state === "exited" ? `exited ${job.exitCode ?? "?"}` : job.state;
}

function commandLine(command: string): string {
  return shownLine(command.trim().split(/\s+/).join(" "));
}

function errorText(error: unknown): string {
  return shownLine(error instanceof Error ? error.message : String(error));
}

export class JobViews implements vscode.Disposable {
  private readonly views = new Map<string, View>();
  private disposed = false;

  constructor(
    private readonly endpoint: () => Promise<JobsEndpoint>,
    private readonly wait: () => Promise<void> = () => new Promise((resolve) => setTimeout(resolve, POLL_MS)),
  ) {}

  /** The command: pick a job, follow it (a failure is said in a warning). */
  async show(): Promise<void> {
    let server: JobsEndpoint;
    let jobs: JobInfo[];
    try {
      server = await this.endpoint();
      jobs = (await server.jobs()).jobs;
    } catch (error) {
      void vscode.window.showWarningMessage(`Tether: cannot list the jobs: ${errorText(error)}`);
      return;
    }
    if (jobs.length === 0) {
      void vscode.window.showInformationMessage("Tether: no background jobs");
      return;
    }
    const picked = await vscode.window.showQuickPick(
      jobs.map((job) => ({
        label: `${job.jobId} · ${state(job)} · ${Math.round(job.runtimeSeconds)} s`,
        description: commandLine(job.command),
        detail: shownLine(job.lastLine),
        job,
      })),
      { placeHolder: "Tether: the job whose output to follow" },
    );
    if (picked !== undefined) {
      this.follow(server, picked.job);
    }
  }

  private follow(server: JobsEndpoint, job: JobInfo): void {
    const key = `${job.sessionId}\n${job.jobId}`;
    let view = this.views.get(key);
    if (view === undefined) {
      const channel = vscode.window.createOutputChannel(`Tether ${job.jobId}`);
      channel.appendLine(`${job.jobId} · ${commandLine(job.command)}`);
      view = { channel, ended: false };
      this.views.set(key, view);
      void this.read(server, job, view);
    }
    view.channel.show(true);
    if (!view.ended) {
      void Promise.resolve(
        vscode.window.showInformationMessage(`Tether: following ${job.jobId} in the Output view`, STOP),
      ).then((choice) => {
        if (choice === STOP) {
          void this.stop(server, job);
        }
      });
    }
  }

  private async stop(server: JobsEndpoint, job: JobInfo): Promise<void> {
    try {
      const result = await server.jobStop(job.sessionId, job.jobId);
      if (!result.stopped) {
        void vscode.window.showInformationMessage(`Tether: ${job.jobId} is not running`);
      }
    } catch (error) {
      void vscode.window.showWarningMessage(`Tether: ${job.jobId}: ${errorText(error)}`);
    }
  }

  /** Reads what the job prints into its channel, from where the last read ended. */
  private async read(server: JobsEndpoint, job: JobInfo, view: View): Promise<void> {
    let since = 0;
    let open = false; // the last line has no line break yet
    while (!this.disposed) {
      let result: AgentJobOutputResult;
      try {
        result = await server.jobOutput({ sessionId: job.sessionId, jobId: job.jobId, since });
      } catch (error) {
        view.channel.appendLine(`${open ? "\n" : ""}[could not read ${job.jobId}: ${errorText(error)}]`);
        view.ended = true;
        return;
      }
      if (this.disposed) {
        return;
      }
      if ((result.lost ?? 0) > 0) {
        view.channel.appendLine(`${open ? "\n" : ""}… [${result.lost} characters cut] …`);
        open = false;
      }
      if (result.text !== "") {
        view.channel.append(result.text);
        open = !result.text.endsWith("\n");
      }
      since = result.next;
      if (result.state !== "running") {
        const note = result.note ? `: ${shownLine(result.note)}` : "";
        view.channel.appendLine(`${open ? "\n" : ""}[${job.jobId} ${state(result)}${note}]`);
        view.ended = true;
        return;
      }
      await this.wait();
    }
  }

  dispose(): void {
    this.disposed = true;
    for (const view of this.views.values()) {
      view.channel.dispose();
    }
    this.views.clear();
  }
}
