const A = await import('/tmp/prev/dist/index.js'), B = await import('/work/main/dist/index.js')
const schema = { type: 'object', properties: { text: { type: 'string' }, n: { type: 'integer' } }, required: ['text', 'n'], additionalProperties: false }
const mk = (lib) => { const tm = new lib.ToolManager({ development: false }); tm.register({ name: 'echo', inputSchema: schema, run: async ({ text, n }) => ({ echoed: text.repeat(n) }) }); return tm }
const a = mk(A), b = mk(B), args = '{"text":"hello","n":3}'
const c = { prev: () => a.callJson('echo', args), now: () => b.callJson('echo', args) }
const res = { prev: [], now: [] }
for (let r = 0; r < 31; r++) for (const [k, f] of Object.entries(c)) { const N = 20000; const t = process.hrtime.bigint(); for (let i = 0; i < N; i++) await f(); res[k].push(Number(process.hrtime.bigint() - t) / N) }
const med = (x) => x.sort((p, q) => p - q)[x.length >> 1]
console.log('prev', med(res.prev).toFixed(0), 'now', med(res.now).toFixed(0))
