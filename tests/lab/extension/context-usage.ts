// st2 lab extension for pi and omp: after each event that can change the context, append
// {"event", "contextUsage"} (ctx.getContextUsage()) as one JSON line to $ST2_LAB_EXTENSION_LOG
// (and a failed turn's errorId, on the lines of its message_end and agent_end).
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
      // A failed turn's typed class as omp carries it (errorId); only on a failure, so the
      // ordinary lines (and the captures made of them) keep their shape.
      if (name === "message_end" && event?.message?.stopReason === "error") record.errorId = event.message.errorId ?? null;
      const last = name === "agent_end" && Array.isArray(event?.messages) ? event.messages[event.messages.length - 1] : null;
      if (last?.stopReason === "error") record.last = { role: last.role, errorId: last.errorId ?? null };
      record.contextUsage = ctx.getContextUsage() ?? null;
      appendFileSync(log, JSON.stringify(record) + "\n");
    });
  }
}
