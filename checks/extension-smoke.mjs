// The runtime half of checks/extension-smoke: drive every handler the transpiled pi and omp
// channel extensions register, with three contexts each — a bare one (none of the telemetry
// surface: the fail-open path an unmanaged or older build takes), a fully populated one (the
// measured shapes), and one whose every telemetry pull throws — through a recorder channel: the
// real descriptor path ($ST2_CHANNEL_FD on a file this script reads back). Then assert the wire.
//
//   node checks/extension-smoke.mjs <transpiled-hooks-dir>
//
// Exit 0 with one line per extension, or 1 naming every failed assertion.
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const directory = process.argv[2];
const failures = [];
const check = (condition, message) => { if (!condition) failures.push(message); };
const READING_KEYS = ["tokens", "contextWindow", "percent", "model", "costUsd"];
const ENVELOPE = {
  context: ["type", "event", "reading", "compaction"],
  state: ["type", "event", "state", "blockedOn", "ask"],
  session: ["type", "event", "sessionFile"],   // the conversation's file, for a relaunch to resume (issue 24)
  turn: ["type", "event", "result"],           // how a run ended, by the harness's typed class (omp only)
};

// Measured shapes (seed 000: a 4,000-token window the turn overran). pi's numerator is the last
// assistant totalTokens (23,425); omp's its prompt-only figure (22,500), never that message's
// totalTokens (22,525).
const HARNESSES = {
  pi: {
    events: ["agent_end", "agent_start", "message_end", "session_compact", "session_shutdown", "session_start", "turn_end"],
    contextEvents: ["session_start", "message_end", "turn_end", "agent_end", "session_compact"],
    usage: { input: 22400, output: 25, cacheRead: 700, cacheWrite: 300, totalTokens: 23425, cost: { total: 0.0703 } },
    reading: { tokens: 23425, contextWindow: 4000, percent: 585.625 },
    atCompaction: { tokens: null, contextWindow: 4000, percent: null },
    numerator: 23425, wrong: 22500,
  },
  omp: {
    events: ["agent_end", "agent_start", "message_end", "session_compact", "session_shutdown", "session_start",
      "session_switch", "tool_approval_requested", "tool_approval_resolved"],
    contextEvents: ["session_start", "session_switch", "agent_end", "session_compact"],
    usage: { input: 22500, output: 25, cacheRead: 0, cacheWrite: 0, totalTokens: 22525, cost: { total: 0.0676 } },
    reading: { tokens: 22500, contextWindow: 4000, percent: 562.5 },
    atCompaction: { tokens: 8100, contextWindow: 4000, percent: 202.5 },
    numerator: 22500, wrong: 22525,
  },
};

function assistant(harness) {
  return { role: "assistant", stopReason: "stop", usage: HARNESSES[harness].usage, content: [] };
}

function eventFor(name, harness) {
  switch (name) {
    case "message_end": return { type: name, message: assistant(harness) };
    case "agent_end": return { type: name, messages: [{ role: "user", content: "hi" }, assistant(harness)] };
    case "session_start": return { type: name, reason: "startup" };
    case "session_compact": return { type: name, compactionEntry: { type: "compaction" }, fromExtension: false };
    case "tool_approval_requested": return { type: name, toolName: "bash", toolCallId: "t1", sessionId: "s", approvalMode: "ask" };
    case "tool_approval_resolved": return { type: name, toolName: "bash", toolCallId: "t1", sessionId: "s", approved: true };
    default: return { type: name };
  }
}

const SESSION_FILE = "/home/u/.pi/agent/sessions/--w--/2026-12-01T00-00-00-000Z_s.jsonl";

function contexts(harness, name) {
  const spec = HARNESSES[harness];
  const entries = [{ type: "message" }, { type: "compaction" }, { type: "compaction" }, { type: "compaction" }];
  const populated = {
    model: { id: "claude-sonnet-4-5" },
    sessionManager: { getEntries: () => entries, getSessionFile: () => SESSION_FILE },
    getContextUsage: () => (name === "session_compact" ? spec.atCompaction : spec.reading),
  };
  const thrower = () => { throw new Error("telemetry pull"); };
  const throwing = new Proxy({}, { get: () => thrower() });
  const throwingPulls = {
    get model() { return thrower(); },
    sessionManager: { getEntries: thrower, getSessionFile: thrower },
    getContextUsage: thrower,
  };
  return { bare: {}, populated, throwing, "throwing-pulls": throwingPulls };
}

async function drive(harness) {
  const module = await import(pathToFileURL(join(directory, `${harness}-channel.js`)).href);
  check(typeof module.default === "function", `${harness}: no default export function`);
  const scratch = mkdtempSync(join(tmpdir(), "st2-extension-smoke-"));
  try {
    // Unmanaged (no channel): the extension loads, registers nothing, throws nothing.
    delete process.env.ST2_CHANNEL_FD;
    const inert = [];
    await module.default({ on: (event) => inert.push(event) });
    check(inert.length === 0, `${harness}: registered ${inert.join(",")} with no channel`);

    const file = join(scratch, "frames.jsonl");
    const descriptor = openSync(file, "w");
    process.env.ST2_CHANNEL_FD = String(descriptor);
    const handlers = new Map();
    await module.default({ on: (event, handler) => handlers.set(event, handler) });
    const registered = [...handlers.keys()].sort();
    check(JSON.stringify(registered) === JSON.stringify(HARNESSES[harness].events),
      `${harness}: registered ${registered.join(",")}, expected ${HARNESSES[harness].events.join(",")}`);
    const runs = [];
    let offset = 0;
    for (const [name, handler] of handlers) {
      for (const [kind, context] of Object.entries(contexts(harness, name))) {
        try {
          await handler(eventFor(name, harness), context);
        } catch (error) {
          failures.push(`${harness}: ${name} with a ${kind} context threw into the harness: ${error}`);
        }
        const text = readFileSync(file, "utf8");
        const frames = text.slice(offset).split("\n").filter(Boolean).map((line) => JSON.parse(line));
        offset = text.length;
        runs.push({ name, kind, frames });
      }
    }
    closeSync(descriptor);
    assertWire(harness, runs);
    return `${harness}: ${registered.length} handlers x 4 contexts, ${runs.reduce((n, run) => n + run.frames.length, 0)} frames`;
  } finally {
    delete process.env.ST2_CHANNEL_FD;
    rmSync(scratch, { recursive: true, force: true });
  }
}

function assertWire(harness, runs) {
  const spec = HARNESSES[harness];
  for (const { name, kind, frames } of runs) {
    const where = `${harness}: ${name} (${kind} context)`;
    for (const frame of frames) {
      const keys = ENVELOPE[frame.type];
      check(keys !== undefined, `${where}: a frame of unknown type ${JSON.stringify(frame)}`);
      if (keys) check(JSON.stringify(Object.keys(frame)) === JSON.stringify(keys),
        `${where}: envelope ${JSON.stringify(Object.keys(frame))}, expected ${JSON.stringify(keys)}`);
      if (frame.type === "session") {
        const expected = kind === "populated" ? SESSION_FILE : null;   // a missing or throwing pull is null
        check(frame.sessionFile === expected,
          `${where}: sessionFile ${JSON.stringify(frame.sessionFile)}, expected ${JSON.stringify(expected)}`);
      }
      if (frame.type === "context") {
        check(frame.reading !== null && typeof frame.reading === "object", `${where}: no reading object`);
        check(JSON.stringify(Object.keys(frame.reading ?? {})) === JSON.stringify(READING_KEYS),
          `${where}: reading keys ${JSON.stringify(Object.keys(frame.reading ?? {}))}, expected all five`);
        check(Buffer.byteLength(JSON.stringify(frame)) < 4096, `${where}: frame over the atomic write size`);
      }
    }
    const context = frames.filter((frame) => frame.type === "context");
    if (spec.contextEvents.includes(name)) check(context.length === 1, `${where}: ${context.length} context frames, expected one`);
    else check(context.length === 0, `${where}: a context frame from an event that carries none`);
    const reading = context[0]?.reading;
    const compaction = context[0]?.compaction;
    if (name === "session_compact" && reading) {
      check(compaction?.trigger === "unknown", `${where}: trigger ${compaction?.trigger}, expected unknown (no reason on the event)`);
      const count = kind === "populated" ? 3 : null;
      check(compaction?.count === count, `${where}: count ${compaction?.count}, expected ${count}` +
        (count === null ? " (a countless edge when the session store cannot be read)" : ""));
      // The edge and the withheld reading ride one frame (pi nulls it; omp's answer is an estimate).
      check(reading.tokens === null && reading.percent === null, `${where}: the compaction frame publishes a numerator`);
      if (kind === "populated") check(reading.contextWindow === 4000, `${where}: the window is not carried with the edge`);
    } else if (context.length) {
      check(compaction === null, `${where}: an edge on ${name}`);
    }
    if (kind === "populated" && reading && name !== "session_compact") {
      const publishes = harness === "pi" || name === "agent_end";
      if (publishes) {
        check(reading.tokens === spec.numerator, `${where}: tokens ${reading.tokens}, expected ${harness}'s own ${spec.numerator}`);
        check(reading.tokens !== spec.wrong, `${where}: tokens ${reading.tokens} is the other harness's numerator`);
        check(reading.percent === spec.reading.percent, `${where}: percent ${reading.percent}, expected the unclamped ${spec.reading.percent}`);
        check(reading.model === "claude-sonnet-4-5", `${where}: model ${reading.model}`);
      } else {
        check(reading.tokens === null && reading.percent === null, `${where}: an estimate published as omp's prompt figure`);
      }
    }
    if (kind !== "populated" && reading) {
      check(READING_KEYS.every((key) => key === "costUsd" || reading[key] === null),
        `${where}: a value from a context that has none: ${JSON.stringify(reading)}`);
    }
  }
  // The held cost is restated on frames from events that carry none (after a message_end).
  const restated = runs.find((run) => run.name === "agent_end" && run.kind === "populated")?.frames.find((f) => f.type === "context");
  if (restated) check(restated.reading.costUsd === spec.usage.cost.total, `${harness}: agent_end does not restate the held cost`);
  const states = runs.flatMap((run) => run.frames.filter((f) => f.type === "state").map((f) => `${run.name}:${f.state}/${f.blockedOn}`));
  check(states.includes("agent_start:active/none") && states.includes("agent_end:idle/none"), `${harness}: turns are not followed (${states})`);
  if (harness === "omp") check(states.includes("tool_approval_requested:active/human"), `omp: an approval is not blocked on a human`);
}

// The re-pull: a settled reading is re-taken on the cadence while the harness sits still, never
// while a turn runs on omp (an estimate), and never from a context whose pull fails.
async function repull(harness) {
  const module = await import(pathToFileURL(join(directory, `${harness}-channel.js`)).href);
  const scratch = mkdtempSync(join(tmpdir(), "st2-extension-smoke-"));
  const file = join(scratch, "frames.jsonl");
  const descriptor = openSync(file, "w");
  let offset = 0;
  const take = () => {
    const text = readFileSync(file, "utf8");
    const frames = text.slice(offset).split("\n").filter(Boolean).map((line) => JSON.parse(line));
    offset = text.length;
    return frames.filter((frame) => frame.event === "repull");
  };
  const pause = (ms = 60) => new Promise((resolve) => setTimeout(resolve, ms));
  // Re-pulls arrive on the harness's event loop, which a loaded machine may not run for longer
  // than a pause: wait for the wanted count (bounded), never count what one window happened to hold.
  const awaitRepulls = async (wanted) => {
    const seen = [];
    for (const deadline = Date.now() + 10_000; seen.length < wanted && Date.now() < deadline;) {
      await pause(5);
      seen.push(...take());
    }
    return seen;
  };
  try {
    const handlers = new Map();
    module.install({ on: (event, handler) => handlers.set(event, handler) },
      { send: (frame) => writeSync(descriptor, JSON.stringify(frame) + "\n") }, 5);
    const spec = HARNESSES[harness];
    const call = (name, kind) => handlers.get(name)(eventFor(name, harness), contexts(harness, name)[kind]);
    await pause();
    check(take().length === 0, `${harness}: a re-pull before anything settled`);
    await call("agent_end", "populated");
    const beats = await awaitRepulls(2);
    check(beats.length >= 2, `${harness}: ${beats.length} re-pulls while idle after a settled reply`);
    check(beats.every((frame) => frame.reading.tokens === spec.numerator && frame.compaction === null),
      `${harness}: a re-pull carries ${JSON.stringify(beats[0]?.reading)}`);
    await call("agent_start", "populated");
    await pause();
    const during = take();
    if (harness === "omp") check(during.length === 0, "omp: a re-pull while a turn runs (an estimate)");
    await call("agent_end", "throwing-pulls");
    await pause();
    check(take().length === 0, `${harness}: a re-pull from a context whose pull throws`);
    await call("agent_end", "populated");
    await call("session_shutdown", "populated");
    take();
    await pause();
    check(take().length === 0, `${harness}: a re-pull after session_shutdown`);
    return `${harness}: re-pull every 5 ms while settled, none otherwise`;
  } finally {
    closeSync(descriptor);
    rmSync(scratch, { recursive: true, force: true });
  }
}

// The turn frame: omp's typed class (omp 18.2.3's AIError.Flag bits on AssistantMessage.errorId)
// decides alone — the credential class only when nothing else is set beside it; never prose, a
// bare status or an abort. pi types no errors and sends none.
const CLASS = 0x1000, AUTH = 0x0100_0000, TRANSIENT = 0x0002_0000, USAGE_LIMIT = 0x0008_0000, ACCOUNT_POLICY = 0x4000;
const TURNS = [
  ["a settled reply", {}, "ordinary"],
  ["the credential class alone (a 401)", { stopReason: "error", errorId: CLASS | AUTH }, "credentialRejected"],
  ["a transient class (a 429)", { stopReason: "error", errorId: CLASS | TRANSIENT }, "failed"],
  ["the credential class beside a usage limit", { stopReason: "error", errorId: CLASS | AUTH | USAGE_LIMIT }, "failed"],
  ["the credential class beside an account policy", { stopReason: "error", errorId: CLASS | AUTH | ACCOUNT_POLICY }, "failed"],
  ["the credential class beside a transient one", { stopReason: "error", errorId: CLASS | AUTH | TRANSIENT }, "failed"],
  ["a bare status 401 (no class bit)", { stopReason: "error", errorId: 401 }, "failed"],
  ["credential prose and no class", { stopReason: "error", errorMessage: "401 Unauthorized: invalid api key" }, "failed"],
  ["an abort carrying the credential class", { stopReason: "aborted", errorId: CLASS | AUTH }, "failed"],
];

async function turns(harness) {
  const module = await import(pathToFileURL(join(directory, `${harness}-channel.js`)).href);
  const sent = [];
  const handlers = new Map();
  module.install({ on: (event, handler) => handlers.set(event, handler) }, { send: (frame) => sent.push(frame) }, 60_000);
  const end = (messages, extra = {}) => {
    sent.length = 0;
    handlers.get("agent_end")({ type: "agent_end", messages, ...extra }, contexts(harness, "agent_end").populated);
    return sent.filter((frame) => frame.type === "turn");
  };
  const user = { role: "user", content: "hi" };
  for (const [what, fields, expected] of TURNS) {
    const frames = end([user, { ...assistant(harness), ...fields }]);
    const wanted = harness === "omp" ? [{ type: "turn", event: "agent_end", result: expected }] : [];
    check(JSON.stringify(frames) === JSON.stringify(wanted),
      `${harness}: agent_end on ${what}: ${JSON.stringify(frames)}, expected ${JSON.stringify(wanted)}`);
  }
  check(end([user, { ...assistant(harness), stopReason: "error", errorId: CLASS | AUTH }], { willContinue: true }).length === 0,
    `${harness}: a turn frame from an agent_end that continues (a retry)`);
  check(end([user]).length === 0, `${harness}: a turn frame with no assistant reply`);
  return `${harness}: ${harness === "omp" ? TURNS.length : 0} turn results from ${TURNS.length} run ends`;
}

const lines = [];
for (const harness of ["pi", "omp"]) {
  try {
    lines.push(await drive(harness));
    lines.push(await repull(harness));
    lines.push(await turns(harness));
  } catch (error) {
    failures.push(`${harness}: ${error?.stack ?? error}`);
  }
}
if (failures.length) {
  for (const failure of failures) console.error(`extension-smoke: ${failure}`);
  process.exit(1);
}
for (const line of lines) console.log(`extension-smoke: ${line}`);
