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
let bodyCalls = 0;
export const bodyCallCount = () => bodyCalls;

/** The tool body every small-call row uses. */
export async function echo({ text, n }) {
  bodyCalls++;
  return { echoed: text.repeat(n) };
}

/** The tool body of group 3: same arguments, returns the 1 MiB text. */
export async function bigEcho({ text, n }) {
  bodyCalls++;
  return bigTextCache;
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
    echoSchema,
    argsText,
    badArgsText,
    // A fresh, already-parsed copy of argsText (for the bare-await row).
    args: JSON.parse(argsText),
    bigText: group === 3 ? bigTextCache : undefined,
    echo,
    bigEcho,
    // The body this group's rows must execute: `echo`, or `bigEcho` in group 3.
    body: group === 3 ? bigEcho : echo,
    bodyCalls: bodyCallCount,
    batchSize: 1,
    ...extra,
  };
}
