// The shared workload: one tool (`echo`), its JSON Schema, its argument text,
// and the 1 MiB text used by the large-output group. Every candidate (peers and
// the toolwire plug-in) gets these through the `ctx` object built here, so all
// rows run the same tool body on the same input.

export const TOOL_NAME = 'echo';
export const TOOL_DESCRIPTION = 'Repeat `text` `n` times.';
export const CALL_ID = 'call_0001';

export const echoSchema = Object.freeze({
  type: 'object',
  properties: Object.freeze({
    text: Object.freeze({ type: 'string' }),
    n: Object.freeze({ type: 'integer' }),
  }),
  required: Object.freeze(['text', 'n']),
  additionalProperties: false,
});

export const argsText = '{"text":"hello","n":3}';
/** Used by the one-time sanity check: must be rejected by every validating path. */
export const badArgsText = '{"text":1}';

/** Exactly 1 MiB (1,048,576 one-byte chars) of text that looks like tool output
 * (lines, quotes, a tab), so JSON.stringify has to escape some of it. */
export const BIG_TEXT_BYTES = 1 << 20;
function makeBigText() {
  const line = 'line {i}: the quick brown fox said "hello" to the lazy dog\tand left.\n';
  let s = '';
  for (let i = 0; s.length < BIG_TEXT_BYTES; i++) s += line.replace('{i}', String(i).padStart(6, '0'));
  return s.slice(0, BIG_TEXT_BYTES);
}
let bigTextCache;
export function bigText() {
  return (bigTextCache ??= makeBigText());
}

// Counts executions of the tool body; the sanity check uses it to prove that
// invalid arguments were rejected *before* the body ran.
const counter = { n: 0 };
export const bodyCallCount = () => counter.n;

// Every candidate gets its OWN copy of the tool body (same source text, compiled
// separately). V8 shares inline-cache feedback between all callers of one
// function, so a single shared `echo` would see argument objects of many hidden
// classes (JSON.parse output, zod output, ...) and go polymorphic/megamorphic,
// slowing every row in the process by an amount that depends on which peers
// are present (the same reason the harness compiles one timing loop per row).
let copySeq = 0;
const ECHO_SRC = `async function echo({ text, n }) {
  counter.n++;
  return { echoed: text.repeat(n) };
}`;
const BIG_ECHO_SRC = `async function bigEcho({ text, n }) {
  counter.n++;
  return bigText;
}`;
/** A fresh copy of the small tool body: async ({ text, n }) => ({ echoed: text.repeat(n) }). */
export function makeEcho(tag = '') {
  return new Function('counter', `// echo copy #${++copySeq} ${tag}\nreturn ${ECHO_SRC};`)(counter);
}
/** A fresh copy of the group-3 tool body: same arguments, returns the 1 MiB text. */
export function makeBigEcho(tag = '') {
  return new Function('counter', 'bigText', `// bigEcho copy #${++copySeq} ${tag}\nreturn ${BIG_ECHO_SRC};`)(counter, bigText());
}

export const GROUPS = {
  1: { id: 1, name: 'single', title: 'Group 1: single small call (parse + validate + execute)' },
  2: { id: 2, name: 'batch', title: 'Group 2: batches of parallel calls (Promise.all of N)' },
  3: { id: 3, name: 'large', title: 'Group 3: 1 MiB tool output rendered as a model-ready tool message' },
  4: { id: 4, name: 'memory', title: 'Group 4: memory (retained results, dropped calls)' },
};

/**
 * Build the context handed to peers.mjs and to the plug-in's `candidates(ctx)`.
 * `extra` carries group-specific fields (batchSize for group 2).
 */
export function makeContext(group, extra = {}) {
  const g = GROUPS[group];
  if (group === 3) bigText();
  return {
    group: g.id,
    groupName: g.name,
    toolName: TOOL_NAME,
    description: TOOL_DESCRIPTION,
    callId: CALL_ID,
    // A fresh deep copy per context: some SDKs annotate the schema object they are given.
    echoSchema: structuredClone(echoSchema),
    argsText,
    badArgsText,
    // A fresh, already-parsed copy of argsText (for the bare-await row).
    args: JSON.parse(argsText),
    bigText: group === 3 ? bigTextCache : undefined,
    // The tool body this group's rows must execute (`echo`, or `bigEcho` in
    // group 3). makeBody() returns a fresh copy: use one per candidate.
    body: group === 3 ? makeBigEcho('ctx') : makeEcho('ctx'),
    makeBody: (tag) => (group === 3 ? makeBigEcho(tag) : makeEcho(tag)),
    makeEcho,
    makeBigEcho,
    bodyCalls: bodyCallCount,
    batchSize: 1,
    ...extra,
  };
}
