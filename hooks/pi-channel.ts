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
// - session_compact carries no reason in 0.73.1 (compactionEntry and fromExtension only; the
//   reason rides compaction_start, which extensions are not sent), so the trigger is unknown.
//   Inside its handler getContextUsage() already reads null and getEntries() already counts the
//   new entry, so the withheld reading and the edge go out as one frame.
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { Producer, channelFromEnvironment, compactionCount, field, guarded, type Channel } from "./st2-channel.ts";

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

export function install(pi: ExtensionAPI, channel: Channel | null): void {
  if (channel === null) return;
  const producer = new Producer(channel);
  pi.on("session_start", (event, ctx) => guarded(() => {
    if (field(event, "reason") !== "reload") producer.forget(); // a replaced session's cost is not restated
    producer.context("session_start", producer.reading(ctx));
    producer.state("session_start", "idle");
  }));
  pi.on("message_end", (event, ctx) => guarded(() => {
    producer.hold(field(event, "message"));
    producer.context("message_end", producer.reading(ctx));
  }));
  pi.on("turn_end", (event, ctx) => guarded(() => producer.context("turn_end", producer.reading(ctx))));
  pi.on("agent_start", (event, ctx) => guarded(() => producer.state("agent_start", "active")));
  pi.on("agent_end", (event, ctx) => guarded(() => {
    producer.context("agent_end", producer.reading(ctx));
    producer.state("agent_end", "idle");
  }));
  pi.on("session_compact", (event, ctx: ExtensionContext) => guarded(() => {
    producer.context("session_compact", producer.reading(ctx), { trigger: "unknown", count: compactionCount(ctx) });
  }));
}

export default function (pi: ExtensionAPI): void {
  guarded(() => install(pi, channelFromEnvironment(process.env)));
}
