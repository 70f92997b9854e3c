// TEMPLATE for bench/toolwire.mjs - not loaded by default.
// Try the plumbing with:  node bench/run.mjs --quick --plugin bench/toolwire.example.mjs
//
// Copy to bench/toolwire.mjs and replace the ajv stand-in with toolwire's own
// path (register the tool with ctx.echoSchema and a body from ctx.makeBody(),
// then execute ctx.argsText through the manager). The rows below are labelled
// "example:" so they cannot be mistaken for toolwire numbers.

import Ajv from 'ajv';

/**
 * @param {object} ctx  see bench/README.md ("ctx")
 * @returns {Promise<Array<{name: string, setup?: Function, run: Function, check?: Function, notes?: string, teardown?: Function}>>}
 */
export async function candidates(ctx) {
  const ajv = new Ajv();
  const validate = ajv.compile(ctx.echoSchema);
  const body = ctx.makeBody('example'); // one body copy per candidate
  async function call(text) {
    const args = JSON.parse(text);
    if (!validate(args)) throw new TypeError(ajv.errorsText(validate.errors));
    return await body(args);
  }

  switch (ctx.group) {
    case 1: // one call → settled result
      return [{ name: 'example: ajv stand-in', notes: 'template row', run: () => call(ctx.argsText), check: call }];
    case 2: // one op = a batch of ctx.batchSize parallel calls
      return [
        {
          name: 'example: ajv stand-in',
          run: () => {
            const ps = new Array(ctx.batchSize);
            for (let i = 0; i < ctx.batchSize; i++) ps[i] = call(ctx.argsText);
            return Promise.all(ps);
          },
          check: call,
        },
      ];
    case 3: // one call → the model-ready serialized tool message (a string ≥ 1 MiB)
      return [
        {
          name: 'example: ajv stand-in → tool message',
          run: async () => JSON.stringify({ role: 'tool', tool_call_id: ctx.callId, content: await call(ctx.argsText) }),
          check: call,
        },
      ];
    case 4: // one call → the settled result object the app keeps
      return [{ name: 'example: ajv stand-in result', run: () => call(ctx.argsText) }];
  }
  return [];
}
