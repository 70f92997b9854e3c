// Issue #24's hot-path targets, read from one run's result (bench/run.mjs writes it):
//   T1  tm.callJson ≤ 1.5× the floor row, and the fastest validating peer ≥ 1.25× slower
//   T2  tm.call, the same
//   T3  tm.callMany of 100 ≤ 0.6× T1 per call
// Every ratio is the median of per-round ratios of rows interleaved in each round of one process:
// T3 divides tm.callMany by T1's call timed beside it in group 2 ("tm.callJson, one at a time"). The
// same code runs 1.0× to 1.6× as fast in one process as in another on this machine, so a ratio of
// two processes' medians (group 2's over group 1's, printed beside it) says little. Beside it too:
// what Promise.all of 100 saves the hand-written path against its calls one at a time.

const FLOOR = 'hand-written + result guarantees (floor)';
const PEER_FAMILIES = new Set(['ai', 'mcp', 'openai-agents', 'langchain']);

function median(values) {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The median over rounds of `a`'s sample divided by `b`'s in the same round. */
function paired(a, b) {
  if (a?.samples === undefined || b?.samples === undefined) return undefined;
  return median(a.samples.map((x, i) => x / b.samples[i]));
}

function tableOf(result, group, key) {
  return result.groups.find((g) => g.group === group)?.tables?.find((t) => t.key === key);
}

/** The targets of one run: `[{ id, target, measured, met }]` (rows missing from the run are left out). */
export function targetsOf(result) {
  const out = [];
  const single = tableOf(result, 1, 'single');
  if (single !== undefined) {
    const row = (name) => single.rows.find((r) => r.name === name && r.status === 'ok');
    const floor = row(FLOOR);
    // the fastest validating peer: the peer row with the lowest median that was checked to validate
    const peers = single.rows.filter((r) => r.status === 'ok' && PEER_FAMILIES.has(r.family) && String(r.validation).startsWith('ok'));
    const fastest = peers.sort((a, b) => a.median - b.median)[0];
    for (const [id, name] of [['T1', 'toolwire tm.callJson'], ['T2', 'toolwire tm.call']]) {
      const tw = row(name);
      if (tw === undefined || floor === undefined) continue;
      const overFloor = paired(tw, floor);
      const peerOverTw = fastest === undefined ? undefined : paired(fastest, tw);
      out.push({
        id,
        target: `${name.replace('toolwire ', '')} ≤ 1.5× floor; fastest validating peer ≥ 1.25× its time`,
        measured: `${Math.round(tw.median)} ns = ${overFloor.toFixed(2)}× floor; ${fastest === undefined ? 'no peer' : `${fastest.name} ${peerOverTw.toFixed(2)}× its time`}`,
        met: overFloor <= 1.5 && (peerOverTw === undefined || peerOverTw >= 1.25),
        overFloor,
        peer: fastest?.name,
        peerOverTw,
      });
    }
    const batchRows = tableOf(result, 2, 'batch100')?.rows ?? [];
    const batch = batchRows.find((r) => r.name === 'toolwire tm.callMany' && r.status === 'ok');
    const oneAtATime = batchRows.find((r) => r.name === 'toolwire tm.callJson, one at a time' && r.status === 'ok');
    const t1 = row('toolwire tm.callJson');
    if (batch !== undefined && oneAtATime !== undefined) {
      const ratio = paired(batch, oneAtATime);
      const across = t1 === undefined ? '' : `; group 2's median over group 1's ${(batch.median / t1.median).toFixed(2)}×`;
      // what running calls together saves the hand-written path, in the same rounds (not judged)
      const handBatch = batchRows.find((r) => r.name === 'hand-written (JSON.parse + ajv)' && r.status === 'ok');
      const handOne = batchRows.find((r) => r.name === 'hand-written, one at a time' && r.status === 'ok');
      const handRatio = paired(handBatch, handOne);
      const hand = handRatio === undefined ? '' : `; the hand-written path's Promise.all of 100 ${handRatio.toFixed(2)}× its calls one at a time`;
      out.push({
        id: 'T3',
        target: 'tm.callMany of 100 ≤ 0.6× T1 per call',
        measured: `${Math.round(batch.median)} ns per call = ${ratio.toFixed(2)}× T1's call in the same process (${Math.round(oneAtATime.median)} ns)${across}${hand}`,
        met: ratio <= 0.6,
        ratio,
      });
    }
  }
  return out;
}

/** The targets as a Markdown table. */
export function formatTargets(rows, title = 'Targets (issue #24)') {
  if (rows.length === 0) return '';
  const lines = [`\n${title}`, '| # | target | measured | met? |', '|---|---|---|---|'];
  for (const r of rows) lines.push(`| ${r.id} | ${r.target} | ${r.measured} | ${r.met ? 'yes' : 'no'} |`);
  return lines.join('\n');
}
