// st2's channel extension for omp (admitted minor 18.2, measured on 18.2.3), injected by
// `st2 driver omp-session` with `-e`; the wire and its guards are hooks/st2-channel.ts. What omp's
// frames mean (seed 000 §omp, re-measured on 18.2.3):
//
// - getContextUsage().tokens is omp's prompt figure (input + cacheRead + cacheWrite of the last
//   assistant message, 11400 in the lab) only when that message is the last one: at agent_end.
//   At session_start, message_end and turn_end it reads an estimate (15125..15135 in the lab:
//   a tokenizer count of the transcript, or the anchor plus an estimated tail), and after a
//   compaction an estimate again (15157). An estimate is never published as omp's prompt figure,
//   so a reading goes out only at an agent_end whose last message is a settled assistant reply;
//   session_start and session_compact send the window with the numerator withheld; the other
//   events send none.
// - session_compact carries no reason (compactionEntry and fromExtension), so the trigger is
//   unknown; the count comes from sessionManager.getEntries().
// - While omp sits still after a settled reply, that reply's context is re-pulled every REPULL_MS
//   (at rest omp still answers its prompt figure); a turn, a compaction or a new session stops it.
// - session_start's idle comes before omp lifts its composer's submit gate (the rest of its
//   InteractiveMode.init()): a Return in between is ignored (st2/drivers/omp/screen.py).
// - omp has no agent_settled; agent_end with willContinue is not a settle. Tool approvals are
//   events here (tool_approval_requested / _resolved): blocked on a human, asked for permission.
// - A final agent_end sends a turn frame from its last message: a settled assistant reply is
//   "ordinary"; a failed one is "credentialRejected" only when omp's own typed class, the bit set
//   AssistantMessage.errorId (AIError.Flag in @oh-my-pi/pi-ai), is the class bit plus AuthFailed
//   and nothing else — omp also sets AuthFailed beside UsageLimit, Transient or AccountPolicy, and
//   a status-only id (no class bit) is no class at all, so those are "failed", as is any other
//   error or an abort. The lab's HTTP 401 arrives as exactly ERROR_CLASS | AUTH_FAILED, its 429 as
//   Transient. errorMessage (prose) is never read.
import type { Flag } from "@oh-my-pi/pi-ai/error";
import type { AgentEndEvent, ExtensionAPI, ExtensionContext } from "@oh-my-pi/pi-coding-agent";
import { Producer, REPULL_MS, channelFromEnvironment, compactionCount, field, guarded, type Channel, type TurnResult } from "./st2-channel.ts";

/** omp 18.2.3's error-class bits (pinned against its declarations below). */
export const ERROR_CLASS = 0x1000;
export const AUTH_FAILED = 0x0100_0000;

type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Pin<T extends true> = T;
export type Pins = [
  Pin<Mutual<ReturnType<ExtensionContext["getContextUsage"]>,
    { tokens: number; contextWindow: number; percent: number } | undefined>>,
  Pin<Mutual<NonNullable<ExtensionContext["model"]>["id"], string>>,
  Pin<"compaction" extends ReturnType<ExtensionContext["sessionManager"]["getEntries"]>[number]["type"] ? true : false>,
  Pin<Mutual<Extract<AgentEndEvent["messages"][number], { role: "assistant" }>["errorId"], number | undefined>>,
  Pin<Mutual<(typeof Flag)["Class"], typeof ERROR_CLASS>>,
  Pin<Mutual<(typeof Flag)["AuthFailed"], typeof AUTH_FAILED>>,
];

/** Whether the last message of an agent_end is a settled assistant reply (the usage anchor). */
export function settledOnAssistant(event: unknown): boolean {
  if (field(event, "willContinue") === true) return false;
  const messages = field(event, "messages");
  if (!Array.isArray(messages) || messages.length === 0) return false;
  const last: unknown = messages[messages.length - 1];
  const stop = field(last, "stopReason");
  return field(last, "role") === "assistant" && field(last, "usage") !== undefined && stop !== "error" && stop !== "aborted";
}

/** How a final agent_end's run ended, by omp's typed class (never its prose); null when its last
 * message is no assistant reply (nothing to say). */
export function turnResult(event: unknown): TurnResult | null {
  if (field(event, "willContinue") === true) return null;
  const messages = field(event, "messages");
  if (!Array.isArray(messages) || messages.length === 0) return null;
  const last: unknown = messages[messages.length - 1];
  if (field(last, "role") !== "assistant") return null;
  if (settledOnAssistant(event)) return "ordinary";
  const rejected = field(last, "stopReason") === "error" && field(last, "errorId") === (ERROR_CLASS | AUTH_FAILED);
  return rejected ? "credentialRejected" : "failed";
}

export function install(pi: ExtensionAPI, channel: Channel | null, repullMs = REPULL_MS): void {
  if (channel === null) return;
  const producer = new Producer(channel);
  pi.on("session_start", (event, ctx) => guarded(() => {
    producer.forget();
    producer.unsettle();
    producer.context("session_start", producer.reading(ctx, true));
    producer.state("session_start", "idle");
    producer.session("session_start", ctx); // the conversation's file, for a relaunch to resume
  }));
  pi.on("session_switch", (event, ctx) => guarded(() => {
    producer.forget();
    producer.unsettle();
    producer.context("session_switch", producer.reading(ctx, true));
    producer.session("session_switch", ctx);
  }));
  pi.on("message_end", (event, ctx) => guarded(() => producer.hold(field(event, "message"))));
  pi.on("agent_start", (event, ctx) => guarded(() => {
    producer.unsettle(); // from here until the next settle omp's answer is an estimate
    producer.state("agent_start", "active");
  }));
  pi.on("agent_end", (event, ctx) => guarded(() => {
    if (field(event, "willContinue") === true) return;
    if (settledOnAssistant(event)) {
      producer.context("agent_end", producer.reading(ctx));
      producer.settle(ctx);
    }
    const result = turnResult(event);
    if (result !== null) producer.turn("agent_end", result);
    producer.state("agent_end", "idle");
    producer.session("agent_end", ctx); // a new session's file exists once its first reply is persisted
  }));
  pi.on("tool_approval_requested", (event, ctx) => guarded(() =>
    producer.state("tool_approval_requested", "active", "human", "permission")));
  pi.on("tool_approval_resolved", (event, ctx) => guarded(() => producer.state("tool_approval_resolved", "active")));
  pi.on("session_compact", (event, ctx: ExtensionContext) => guarded(() => {
    producer.unsettle(); // after a compaction omp estimates again
    producer.context("session_compact", producer.reading(ctx, true), { trigger: "unknown", count: compactionCount(ctx) });
  }));
  pi.on("session_shutdown", (event, ctx) => guarded(() => producer.unsettle()));
  producer.repull(repullMs);
}

export default function (pi: ExtensionAPI): void {
  guarded(() => install(pi, channelFromEnvironment(process.env)));
}
