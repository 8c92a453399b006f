// st2's channel core, shared by hooks/pi-channel.ts and hooks/omp-channel.ts (seed 000 §pi, §omp).
//
// The wire to the wrapper (`st2 driver pi-session` / `omp-session`): one JSON object per line,
// written with one write(2) of at most FRAME_LIMIT bytes (below PIPE_BUF, so a frame is never
// interleaved with another writer's) to the descriptor the wrapper passed in $ST2_CHANNEL_FD —
// an inherited pipe, non-blocking on the wrapper's side, never a file in the catalog.
//
//   {"type":"context","event":E,"reading":{"tokens","contextWindow","percent","model","costUsd"},
//    "compaction":null | {"trigger":"unknown","count":N | null}}
//   {"type":"state","event":E,"state":"idle"|"active","blockedOn":"none"|"human","ask":"none"|"permission"}
//   {"type":"session","event":E,"sessionFile":F | null}
//   {"type":"turn","event":E,"result":"ordinary"|"credentialRejected"|"failed"}
//
// A turn frame is how a run ended by the harness's own typed result, a closed word and nothing
// else (no status, no prose): only an extension whose harness types its errors sends one
// (hooks/omp-channel.ts); the wrapper publishes or clears the seat's providerAuth from it.
//
// `sessionFile` is sessionManager.getSessionFile(): the file the harness keeps this conversation
// in, which the wrapper records so a relaunch resumes it (issue 24); null when there is none.
//
// Every number is the harness's own (getContextUsage() verbatim, percent unrounded and
// unclamped); null is withheld. `count` is the harness-durable number of compaction entries in
// sessionManager.getEntries(), or null when that read failed (st2 then counts the edge).
//
// Nothing here may throw into the harness: every telemetry pull is guarded, a frame that cannot
// be written (no channel, a full pipe, a gone wrapper) is dropped.
import { writeSync } from "node:fs";

export const CHANNEL_FD_ENV = "ST2_CHANNEL_FD";
export const FRAME_LIMIT = 4096;
/** How often a settled reading is re-taken while the harness sits still (the record's own
 * heartbeat, 300 s, decides whether a re-taken reading is written). */
export const REPULL_MS = 60_000;
const TEXT_LIMIT = 256;

export type Frame = Record<string, unknown>;

export interface Channel {
  send(frame: Frame): void;
}

export interface Reading {
  tokens: number | null;
  contextWindow: number | null;
  percent: number | null;
  model: string | null;
  costUsd: number | null;
}

/** How a run of the agent ended (the turn frame's word). */
export type TurnResult = "ordinary" | "credentialRejected" | "failed";

export interface Compaction {
  trigger: "unknown";
  count: number | null;
}

/** The channel the wrapper handed over, or null (an unmanaged run: the extension stays inert). */
export function channelFromEnvironment(environment: Record<string, string | undefined>): Channel | null {
  const text = attempt(() => environment[CHANNEL_FD_ENV]);
  if (typeof text !== "string" || !/^[0-9]{1,9}$/.test(text)) return null;
  const descriptor = Number(text);
  return {
    send(frame: Frame): void {
      try {
        const bytes = Buffer.from(JSON.stringify(frame) + "\n", "utf8");
        if (bytes.length <= FRAME_LIMIT) writeSync(descriptor, bytes);
      } catch {
        // A full pipe (EAGAIN), a gone wrapper (EPIPE) or a closed descriptor: the frame is lost,
        // the harness is not told.
      }
    },
  };
}

/** ``pull()``, or undefined when it throws. */
export function attempt<T>(pull: () => T): T | undefined {
  try {
    return pull();
  } catch {
    return undefined;
  }
}

function finite(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

function text(value: unknown): string | null {
  return typeof value === "string" && value.length > 0 ? value.slice(0, TEXT_LIMIT) : null;
}

/** A field of an object, or undefined (a missing object, a throwing getter). */
export function field(value: unknown, name: string): unknown {
  return attempt(() => (value !== null && typeof value === "object" ? (value as Record<string, unknown>)[name] : undefined));
}

/** The harness-durable compaction count, or null when the session store cannot be read. */
export function compactionCount(context: unknown): number | null {
  const entries = attempt(() => {
    const manager = field(context, "sessionManager");
    const getEntries = field(manager, "getEntries");
    return typeof getEntries === "function" ? getEntries.call(manager) : undefined;
  });
  if (!Array.isArray(entries)) return null;
  let count = 0;
  for (const entry of entries) if (field(entry, "type") === "compaction") count += 1;
  return count;
}

/** ``ctx.sessionManager.getSessionFile()``, or null (no persistent session, a throwing pull). */
export function sessionFile(context: unknown): string | null {
  const file = attempt(() => {
    const manager = field(context, "sessionManager");
    const pull = field(manager, "getSessionFile");
    return typeof pull === "function" ? pull.call(manager) : undefined;
  });
  return typeof file === "string" && file.length > 0 && file.length <= FRAME_LIMIT / 2 ? file : null;
}

/** The model id from ``ctx.model``, or null. */
export function modelId(context: unknown): string | null {
  return text(field(field(context, "model"), "id"));
}

/** ``ctx.getContextUsage()`` as the harness answers it, or undefined when it cannot (absent, throwing). */
export function pullUsage(context: unknown): unknown {
  return attempt(() => {
    const pull = field(context, "getContextUsage");
    return typeof pull === "function" ? pull.call(context) : undefined;
  });
}

/** A pulled usage's three numbers; every part null when the harness did not answer it. */
export function contextUsage(context: unknown, usage: unknown = pullUsage(context)): { tokens: number | null; contextWindow: number | null; percent: number | null } {
  return {
    tokens: finite(field(usage, "tokens")),
    contextWindow: finite(field(usage, "contextWindow")),
    percent: finite(field(usage, "percent")),
  };
}

/** The cost of an assistant message's usage (``usage.cost.total``), or undefined. */
export function assistantCost(message: unknown): number | null | undefined {
  if (field(message, "role") !== "assistant") return undefined;
  return finite(field(field(field(message, "usage"), "cost"), "total"));
}

/**
 * The producer's one piece of state: the last assistant message's cost, restated on every frame
 * (the record replaces a reading wholesale, so a frame without it would erase it). Cleared when
 * the session is replaced.
 */
export class Producer {
  heldCost: number | null = null;
  /** The context a re-pull reads — set after a frame that published the harness's own number,
   * cleared when the next answer would not be one (a turn running, an estimate, a replaced session). */
  private settled: { context: unknown; withheld: boolean } | null = null;
  private timer: unknown = null;

  constructor(private readonly channel: Channel | null) {}

  settle(context: unknown, withheld = false): void {
    this.settled = { context, withheld };
  }

  unsettle(): void {
    this.settled = null;
  }

  /** Re-take the settled reading every ``intervalMs`` while the harness sits still, so an idle
   * seat's record is refreshed by the write policy's heartbeat instead of ageing into stale.
   * The timer never keeps the harness alive (unref). */
  repull(intervalMs = REPULL_MS): void {
    if (this.timer !== null) return;
    this.timer = attempt(() => setInterval(() => guarded(() => this.beat()), intervalMs)) ?? null;
    attempt(() => (this.timer as { unref?: () => void } | null)?.unref?.());
  }

  /** One re-pull: nothing is sent unless the settled context answers (a stale or throwing
   * context re-takes nothing, so a failing pull can never null a published reading). */
  beat(): void {
    const settled = this.settled;
    if (settled === null) return;
    const usage = pullUsage(settled.context);
    if (usage === null || typeof usage !== "object") return;
    this.context("repull", this.reading(settled.context, settled.withheld, usage));
  }

  hold(message: unknown): void {
    const cost = assistantCost(message);
    if (cost !== undefined && cost !== null) this.heldCost = cost;
  }

  forget(): void {
    this.heldCost = null;
  }

  reading(context: unknown, withheld = false, pulled: unknown = pullUsage(context)): Reading {
    const usage = contextUsage(context, pulled);
    return {
      tokens: withheld ? null : usage.tokens,
      contextWindow: usage.contextWindow,
      percent: withheld ? null : usage.percent,
      model: modelId(context),
      costUsd: this.heldCost,
    };
  }

  context(event: string, reading: Reading, compaction: Compaction | null = null): void {
    this.channel?.send({ type: "context", event, reading, compaction });
  }

  session(event: string, context: unknown): void {
    this.channel?.send({ type: "session", event, sessionFile: sessionFile(context) });
  }

  turn(event: string, result: TurnResult): void {
    this.channel?.send({ type: "turn", event, result });
  }

  state(event: string, state: "idle" | "active", blockedOn: "none" | "human" = "none", ask: "none" | "permission" = "none"): void {
    this.channel?.send({ type: "state", event, state, blockedOn, ask });
  }
}

/** Run ``body``; whatever it throws stays here. */
export function guarded(body: () => void): void {
  try {
    body();
  } catch {
    // A defect in the producer must never reach the harness's event loop.
  }
}
