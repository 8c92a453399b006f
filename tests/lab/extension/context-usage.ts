// st2 lab extension for pi and omp: after each event that can change the context, append
// {"event", "contextUsage"} (ctx.getContextUsage()) as one JSON line to $ST2_LAB_EXTENSION_LOG.
// Loaded with `-e`; both harnesses share the extension API, so one file serves both.
import { appendFileSync } from "node:fs";

const EVENTS = [
  "session_start",
  "message_end",
  "turn_end",
  "agent_end",
  "session_before_compact",
  "session_compact",
];

export default function (pi: any) {
  const log = process.env.ST2_LAB_EXTENSION_LOG;
  if (!log) return;
  for (const name of EVENTS) {
    pi.on(name, async (event: any, ctx: any) => {
      const record: Record<string, unknown> = { event: name };
      if (name === "message_end") record.role = event?.message?.role ?? null;
      if (name === "message_end") record.usage = event?.message?.usage ?? null;
      record.contextUsage = ctx.getContextUsage() ?? null;
      appendFileSync(log, JSON.stringify(record) + "\n");
    });
  }
}
