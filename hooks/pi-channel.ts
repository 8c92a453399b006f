// st2's channel extension for pi (pinned build 0.73.1), injected by `st2 driver pi-session` with
// `-e`; the wire and its guards are hooks/st2-channel.ts. What pi's frames mean (seed 000 §pi,
// re-measured on 0.73.1):
//
// - The events are the ones 0.73.1 declares in ExtensionAPI.on (dist/core/extensions/types.d.ts):
//   session_start, message_end, turn_end and agent_end carry a context frame; there is no
//   agent_settled in this build. agent_start / agent_end also carry the state (active / idle).
// - getContextUsage().tokens is pi's own occupancy: the last assistant message's totalTokens
//   (input + output + cacheRead + cacheWrite; 11442 in the lab) plus pi's estimate of anything
//   after it, and null right after a compaction until the next reply — forwarded as is.
// - While pi sits still the last context is re-pulled every REPULL_MS (a re-pull whose pull fails
//   sends nothing); session_shutdown stops it (the captured ctx goes stale).
// - session_start and agent_end carry the session frame (sessionManager.getSessionFile()): a new
//   session's file exists only once its first reply is persisted, so agent_end names it then.
// - session_compact carries no reason in 0.73.1 (compactionEntry and fromExtension only; the
//   reason rides compaction_start, which extensions are not sent), so the trigger is unknown.
//   Inside its handler getContextUsage() already reads null and getEntries() already counts the
//   new entry, so the withheld reading and the edge go out as one frame.
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { Producer, REPULL_MS, channelFromEnvironment, compactionCount, field, guarded, type Channel, type Compaction } from "./st2-channel.ts";

// Compile-time pins on pi's own declarations: the runtime guards in st2-channel.ts widen every
// pull to unknown, so these keep the type check's teeth on the three surfaces the frames read.
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Pin<T extends true> = T;
export type Pins = [
  Pin<Mutual<ReturnType<ExtensionContext["getContextUsage"]>,
    { tokens: number | null; contextWindow: number; percent: number | null } | undefined>>,
  Pin<Mutual<NonNullable<ExtensionContext["model"]>["id"], string>>,
  Pin<"compaction" extends ReturnType<ExtensionContext["sessionManager"]["getEntries"]>[number]["type"] ? true : false>,
];

export const CONTEXT_EVENTS = ["session_start", "message_end", "turn_end", "agent_end"] as const;

export function install(pi: ExtensionAPI, channel: Channel | null, repullMs = REPULL_MS): void {
  if (channel === null) return;
  const producer = new Producer(channel);
  // Every answer pi gives is its own number (its null included), so every context frame settles.
  const publish = (event: string, ctx: ExtensionContext, compaction: Compaction | null = null) => {
    producer.context(event, producer.reading(ctx), compaction);
    producer.settle(ctx);
  };
  pi.on("session_start", (event, ctx) => guarded(() => {
    if (field(event, "reason") !== "reload") producer.forget(); // a replaced session's cost is not restated
    publish("session_start", ctx);
    producer.state("session_start", "idle");
    producer.session("session_start", ctx); // the conversation's file, for a relaunch to resume
  }));
  pi.on("message_end", (event, ctx) => guarded(() => {
    producer.hold(field(event, "message"));
    publish("message_end", ctx);
  }));
  pi.on("turn_end", (event, ctx) => guarded(() => publish("turn_end", ctx)));
  pi.on("agent_start", (event, ctx) => guarded(() => producer.state("agent_start", "active")));
  pi.on("agent_end", (event, ctx) => guarded(() => {
    publish("agent_end", ctx);
    producer.state("agent_end", "idle");
    producer.session("agent_end", ctx); // pi writes a new session's file with its first reply
  }));
  pi.on("session_compact", (event, ctx) => guarded(() => {
    publish("session_compact", ctx, { trigger: "unknown", count: compactionCount(ctx) });
  }));
  pi.on("session_shutdown", (event, ctx) => guarded(() => producer.unsettle())); // its ctx goes stale
  producer.repull(repullMs);
}

export default function (pi: ExtensionAPI): void {
  guarded(() => install(pi, channelFromEnvironment(process.env)));
}
