// Peer candidates for each bench group.
//
// Every candidate is `{ name, family, role?, notes, setup?, run, check?, expectNoValidation? }`
// (the same shape the toolwire plug-in returns; see README.md):
//   run()        performs ONE operation: one call (groups 1, 3, 4) or one batch
//                of ctx.batchSize parallel calls (group 2). It starts from the
//                JSON argument text (except the bare-await floor rows).
//   check(text)  one call with the given argument text through the same path;
//                must resolve for valid args and throw for invalid ones. Peers
//                whose public path reports invalid input as a value (MCP's
//                `isError` result, the Agents SDK's error string) convert that
//                to a throw here; the timed `run()` does not.
//
// Each family's modules are imported lazily inside its builder, so a run that
// excludes a family (the "clean" re-run after pollution) never loads it.
//
// Nothing here is a private API except MCP (a): the registered `tools/call`
// handler is read from `server.server._requestHandlers` (documented below).

export const FAMILIES = ['baseline', 'ai', 'mcp', 'openai-agents', 'langchain'];

/** Promise.all of `n` calls of `call`. Each batch function is compiled separately
 * (unique source), so its call site's feedback is not shared between candidates. */
let batchSeq = 0;
function batchOf(n, call) {
  return new Function(
    'n',
    'call',
    `// batch #${++batchSeq}\nreturn () => {\n  const ps = new Array(n);\n  for (let i = 0; i < n; i++) ps[i] = call();\n  return Promise.all(ps);\n};`,
  )(n, call);
}

/** Sum of the guarantees row's measured durations (kept so that the clock reads are not dead code). */
let durations = 0;
export const guaranteeDurations = () => durations;

/** A deep-frozen copy of a JSON-like value (plain objects, arrays, primitives). */
function frozenCopy(value) {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return Object.freeze(value.map(frozenCopy));
  const out = {};
  for (const k of Object.keys(value)) out[k] = frozenCopy(value[k]);
  return Object.freeze(out);
}

const toolMessage = (callId, content) => JSON.stringify({ role: 'tool', tool_call_id: callId, content });

// ---------------------------------------------------------------- baselines
async function baseline(ctx) {
  const { default: Ajv } = await import('ajv');
  const ajv = new Ajv();
  const validate = ajv.compile(ctx.echoSchema);
  const { args, argsText, callId } = ctx;
  const body = ctx.makeBody('bare'); // each candidate has its own copy of the body
  const handBody = ctx.makeBody('hand-written');
  // The hand-written path: JSON.parse + ajv-compiled validator + call.
  async function call(text) {
    const a = JSON.parse(text);
    if (!validate(a)) throw new TypeError(`invalid arguments: ${ajv.errorsText(validate.errors)}`);
    return await handBody(a);
  }
  const handNotes = 'JSON.parse(argsText) + ajv-compiled validator + await body';
  // Not a peer: the hand-written path plus the least any runtime does that gives every result
  // toolwire's guarantees (docs/performance.md, "The floor of the guarantees"): a call id, a
  // duration from two clock reads, a deep-frozen copy of what the tool returned (it cannot change
  // it afterwards) and a frozen view { status, data, callId }. No limits, cycles, toJSON,
  // metrics, cancellation or events: a lower bound for toolwire's own row.
  const guardedBody = ctx.makeBody('guarantees');
  let seq = 0;
  async function guaranteed(text) {
    const a = JSON.parse(text);
    if (!validate(a)) throw new TypeError(`invalid arguments: ${ajv.errorsText(validate.errors)}`);
    const callId = `call_${++seq}`;
    const t0 = performance.now();
    const data = frozenCopy(await guardedBody(a));
    durations += performance.now() - t0;
    return Object.freeze({ status: 'ok', data, callId });
  }
  const guaranteedNotes = `${handNotes} + call id + two clock reads + deep-frozen copy + frozen { status, data, callId }`;
  switch (ctx.group) {
    case 1:
      return [
        { name: 'bare await', role: 'bare', notes: 'await body(args): pre-parsed args, no validation (floor)', run: () => body(args) },
        { name: 'hand-written (JSON.parse + ajv)', role: 'ajv', notes: handNotes, run: () => call(argsText), check: call },
        { name: 'hand-written + result guarantees (floor)', role: 'guarantees', notes: guaranteedNotes, run: () => guaranteed(argsText), check: guaranteed },
      ];
    case 2:
      return [
        { name: 'bare await', role: 'bare', notes: 'Promise.all of N × body(args), no validation', run: batchOf(ctx.batchSize, () => body(args)) },
        { name: 'hand-written (JSON.parse + ajv)', role: 'ajv', notes: `Promise.all of N × (${handNotes})`, run: batchOf(ctx.batchSize, () => call(argsText)), check: call },
        {
          name: 'hand-written, one at a time',
          notes: `N × (${handNotes}) awaited one after another: what running them together saves the hand-written path (printed beside T3)`,
          run: async () => {
            for (let i = 0; i < ctx.batchSize; i++) await call(argsText);
          },
          check: call,
        },
      ];
    case 3:
      return [
        { name: 'floor: JSON.stringify(text)', role: 'floor', notes: 'JSON.stringify(await body(args)) - the unavoidable work', run: async () => JSON.stringify(await body(args)) },
        {
          name: 'hand-written (ajv) → tool message', role: 'ajv',
          notes: `${handNotes}, then JSON.stringify({role:"tool", tool_call_id, content: text})`,
          run: async () => toolMessage(callId, await call(argsText)),
          check: call,
        },
      ];
    case 4:
      return [
        { name: 'plain objects (bare await)', role: 'plain', notes: 'retains the body result {echoed} itself', run: () => body(args) },
        { name: 'hand-written + result guarantees (floor)', role: 'guarantees', notes: guaranteedNotes, run: () => guaranteed(argsText) },
      ];
  }
  return [];
}

// ---------------------------------------------------------------- Vercel AI SDK
// `ai` does not export its internal tool-call path (parseToolCall / executeToolCall
// in generateText). Its public building blocks are re-created here exactly as
// ai@6 dist uses them:
//   doParseToolCall:  safeParseJSON({ text, schema: asSchema(tool.inputSchema) })
//   executeToolCall:  executeTool({ execute: tool.execute.bind(tool), input, options })
//                     and builds { type:'tool-result', toolCallId, toolName, input, output, dynamic }
//   createToolModelOutput (group 3): string → {type:'text'}, else {type:'json'}
// Not included: the noop-tracer `recordSpan` wrapper and the onToolCallStart/Finish
// callback fan-out that generateText adds around executeTool.
// NOTE: `jsonSchema(schema)` WITHOUT a `validate` option does not validate at all
// (safeValidateTypes returns success when `validate` is undefined); the row that
// shows this is expected to fail the sanity check and is not timed.
async function aiSdk(ctx) {
  const { jsonSchema, tool, zodSchema } = await import('ai');
  const { safeParseJSON, executeTool, asSchema } = await import('@ai-sdk/provider-utils');
  const { default: Ajv } = await import('ajv');
  const { z } = await import('zod');
  const ajv = new Ajv();
  const ajvValidate = ajv.compile(ctx.echoSchema);
  const { argsText, callId, toolName } = ctx;
  const EMPTY_MESSAGES = [];

  const mk = (inputSchema) => tool({ description: ctx.description, inputSchema, execute: ctx.makeBody('ai') });
  const jsonAjvTool = mk(
    jsonSchema(structuredClone(ctx.echoSchema), {
      validate: (value) =>
        ajvValidate(value)
          ? { success: true, value }
          : { success: false, error: new TypeError(ajv.errorsText(ajvValidate.errors)) },
    }),
  );
  const zodTool = mk(zodSchema(z.object({ text: z.string(), n: z.number().int() }).strict()));
  const noValidateTool = mk(jsonSchema(structuredClone(ctx.echoSchema)));

  async function execute(t, text) {
    const parsed = await safeParseJSON({ text, schema: asSchema(t.inputSchema) });
    if (!parsed.success) throw parsed.error;
    const input = parsed.value;
    let output;
    for await (const part of executeTool({
      execute: t.execute.bind(t),
      input,
      options: { toolCallId: callId, messages: EMPTY_MESSAGES, abortSignal: undefined, experimental_context: undefined },
    })) {
      if (part.type !== 'preliminary') output = part.output;
    }
    return { type: 'tool-result', toolCallId: callId, toolName, input, output, dynamic: false };
  }
  const path = 'safeParseJSON(text, asSchema(inputSchema)) → executeTool → tool-result part';
  const variants = [
    { name: 'ai: jsonSchema + ajv validate', tool: jsonAjvTool, notes: `tool({inputSchema: jsonSchema(schema, {validate: ajv})}); ${path}` },
    { name: 'ai: zodSchema (zod 4)', tool: zodTool, notes: `tool({inputSchema: zodSchema(z.object(...).strict())}); ${path}` },
  ];
  switch (ctx.group) {
    case 1:
      return [
        ...variants.map((v) => ({ name: v.name, notes: v.notes, run: () => execute(v.tool, argsText), check: (t) => execute(v.tool, t) })),
        {
          name: 'ai: jsonSchema() without validate', expectNoValidation: true,
          notes: 'jsonSchema(schema) with no validate option: ai performs no validation',
          run: () => execute(noValidateTool, argsText), check: (t) => execute(noValidateTool, t),
        },
      ];
    case 2: {
      const v = variants[0];
      return [{ name: v.name, notes: `Promise.all of N × (${v.notes})`, run: batchOf(ctx.batchSize, () => execute(v.tool, argsText)), check: (t) => execute(v.tool, t) }];
    }
    case 3: {
      const v = variants[0];
      return [
        {
          name: 'ai: executeTool → tool ModelMessage',
          notes: `${v.notes}; then createToolModelOutput equivalent ({type:"text", value}) in a {role:"tool", content:[tool-result]} ModelMessage, JSON.stringify'd (what a provider puts in the request body)`,
          run: async () => {
            const r = await execute(v.tool, argsText);
            const output = typeof r.output === 'string' ? { type: 'text', value: r.output } : { type: 'json', value: r.output ?? null };
            return JSON.stringify({ role: 'tool', content: [{ type: 'tool-result', toolCallId: r.toolCallId, toolName: r.toolName, output }] });
          },
          check: (t) => execute(v.tool, t),
        },
      ];
    }
    case 4: {
      const v = variants[0];
      return [{ name: 'ai: tool-result part', notes: 'retains the {type:"tool-result", ...} part executeToolCall produces', run: () => execute(v.tool, argsText) }];
    }
  }
  return [];
}

// ---------------------------------------------------------------- MCP SDK
// McpServer.registerTool only accepts Zod (raw shape or object) input schemas,
// so MCP validates with zod: z.object({text: z.string(), n: z.number().int()}).strict().
// The tool callback must return a CallToolResult, so it wraps the body as
// {content:[{type:"text", text: JSON.stringify(result)}]} (a string result is used as-is).
//
// (a) handler path: the request handler McpServer installs for "tools/call",
//     read from `mcpServer.server._requestHandlers.get('tools/call')` (a
//     TypeScript-private Map on Protocol; it is the function Protocol._onrequest
//     calls). It runs: CallToolRequestSchema parse (zod), tool lookup,
//     validateToolInput (zod), the callback, CallToolResultSchema parse of the
//     result. Per call we JSON.parse the argument text and build the request
//     object; `extra` is one shared minimal object. Excluded: transport framing
//     (JSON-RPC frame parse + JSONRPCMessageSchema) and _onrequest bookkeeping.
// (b) round trip: Client.callTool ↔ McpServer over InMemoryTransport.createLinkedPair().
//     The in-memory transport passes message objects by reference (no JSON
//     serialization); everything else (request ids, response routing, timeout
//     timers, result schema parse on the client) is the real path.
async function mcpSdk(ctx) {
  const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js');
  const { z } = await import('zod');
  const { argsText, callId, toolName } = ctx;

  function makeServer() {
    const body = ctx.makeBody('mcp');
    const server = new McpServer({ name: 'bench-server', version: '1.0.0' });
    server.registerTool(
      toolName,
      { description: ctx.description, inputSchema: z.object({ text: z.string(), n: z.number().int() }).strict() },
      async (a) => {
        const r = await body(a);
        return { content: [{ type: 'text', text: typeof r === 'string' ? r : JSON.stringify(r) }] };
      },
    );
    return server;
  }

  // (a)
  const handlerServer = makeServer();
  const handler = handlerServer.server._requestHandlers.get('tools/call');
  if (typeof handler !== 'function') throw new Error('MCP: no tools/call handler found in server.server._requestHandlers');
  const extra = {
    signal: new AbortController().signal,
    requestId: 1,
    sendNotification: async () => {},
    sendRequest: async () => { throw new Error('not supported in bench'); },
  };
  let nextId = 1;
  const viaHandler = (text) =>
    handler({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: toolName, arguments: JSON.parse(text) } }, extra);

  // (b)
  let client;
  const viaClient = (text) => client.callTool({ name: toolName, arguments: JSON.parse(text) });
  const setupClient = async () => {
    if (client) return;
    const server = makeServer();
    const [clientT, serverT] = InMemoryTransport.createLinkedPair();
    const c = new Client({ name: 'bench-client', version: '1.0.0' });
    await Promise.all([server.connect(serverT), c.connect(clientT)]);
    client = c;
  };
  const throwIfError = (r) => {
    if (r?.isError) throw new Error(`MCP isError result: ${r.content?.[0]?.text}`);
    return r;
  };
  const checkHandler = async (t) => throwIfError(await viaHandler(t));
  const checkClient = async (t) => throwIfError(await viaClient(t));
  const notesA = 'McpServer tools/call handler from server.server._requestHandlers (zod request + input + result parse); JSON.parse(args) per call';
  const notesB = 'Client.callTool ↔ McpServer over InMemoryTransport (objects passed by reference, no JSON framing)';

  switch (ctx.group) {
    case 1:
      return [
        { name: 'mcp (a): tools/call handler', notes: notesA, run: () => viaHandler(argsText), check: checkHandler },
        { name: 'mcp (b): client.callTool in-memory', notes: notesB, setup: setupClient, run: () => viaClient(argsText), check: checkClient },
      ];
    case 2:
      return [
        { name: 'mcp (a): tools/call handler', notes: `Promise.all of N × ${notesA}`, run: batchOf(ctx.batchSize, () => viaHandler(argsText)), check: checkHandler },
        { name: 'mcp (b): client.callTool in-memory', notes: `Promise.all of N × ${notesB} (one connection)`, setup: setupClient, run: batchOf(ctx.batchSize, () => viaClient(argsText)), check: checkClient },
      ];
    case 3:
      return [
        {
          name: 'mcp (a): handler → JSON-RPC frame',
          notes: `${notesA}; the CallToolResult (content text = the 1 MiB string) is JSON.stringify'd as the {result, jsonrpc, id} response frame a stdio/HTTP transport sends`,
          run: async () => {
            const req = { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: toolName, arguments: JSON.parse(argsText) } };
            const result = await handler(req, extra);
            return JSON.stringify({ result, jsonrpc: '2.0', id: req.id });
          },
          check: checkHandler,
        },
        {
          name: 'mcp (b): client.callTool → tool message',
          notes: `${notesB}; then the host renders content[0].text as JSON.stringify({role:"tool", tool_call_id, content}). No wire serialization happens in-memory (a real transport adds a stringify + parse)`,
          setup: setupClient,
          run: async () => {
            const r = await viaClient(argsText);
            return toolMessage(callId, r.content[0].text);
          },
          check: checkClient,
        },
      ];
    case 4:
      return [
        { name: 'mcp (a): CallToolResult from handler', notes: 'retains the CallToolResult the handler returns', run: () => viaHandler(argsText) },
        { name: 'mcp (b): CallToolResult from client', notes: 'retains the CallToolResult client.callTool returns', setup: setupClient, run: () => viaClient(argsText) },
      ];
  }
  return [];
}

// ---------------------------------------------------------------- OpenAI Agents SDK
// tool({...}) returns a FunctionTool; FunctionTool.invoke(runContext, jsonText) is
// the path the Runner uses (it parses the JSON text itself). RunContext is a
// public export (`new RunContext({})`); one is shared, as within a run.
// NOTE: with a plain JSON-schema `parameters`, the SDK does NOT validate the
// arguments (strict:false → JSON.parse only; strict:true → JSON.parse + a strict
// "normalizeInput" pass that does not reject wrong types; it relies on OpenAI's
// server-side strict mode). Those rows are expected to fail the sanity check and
// are not timed. The validating variant uses zod parameters (strict is then
// mandatory). On invalid input the default errorFunction makes invoke RESOLVE
// with "An error occurred while running the tool. Please try again." (sent to
// the model), so check() turns that string into a throw.
async function openaiAgents(ctx) {
  const { tool, RunContext, RunToolCallOutputItem, Agent } = await import('@openai/agents');
  const { z } = await import('zod');
  const { argsText, callId, toolName } = ctx;
  const runContext = new RunContext({});
  const mk = (parameters, strict) => tool({ name: toolName, description: ctx.description, parameters, strict, execute: ctx.makeBody('openai-agents') });
  const zodTool = mk(z.object({ text: z.string(), n: z.number().int() }).strict(), true);
  const jsonStrict = mk(structuredClone(ctx.echoSchema), true);
  const jsonLoose = mk(structuredClone(ctx.echoSchema), false);
  const DEFAULT_ERROR = 'An error occurred while running the tool. Please try again.';
  const checkOf = (t) => async (text) => {
    const r = await t.invoke(runContext, text);
    if (r === DEFAULT_ERROR) throw new Error(`Agents SDK returned its tool error string`);
    return r;
  };
  const zodNotes = "tool({parameters: z.object(...).strict(), strict: true}).invoke(runContext, argsText)";
  switch (ctx.group) {
    case 1:
      return [
        { name: 'openai-agents: zod params, invoke', notes: zodNotes, run: () => zodTool.invoke(runContext, argsText), check: checkOf(zodTool) },
        { name: 'openai-agents: JSON schema strict:true', expectNoValidation: true, notes: 'tool({parameters: jsonSchema, strict: true}).invoke(...)', run: () => jsonStrict.invoke(runContext, argsText), check: checkOf(jsonStrict) },
        { name: 'openai-agents: JSON schema strict:false', expectNoValidation: true, notes: 'tool({parameters: jsonSchema, strict: false}).invoke(...)', run: () => jsonLoose.invoke(runContext, argsText), check: checkOf(jsonLoose) },
      ];
    case 2:
      return [{ name: 'openai-agents: zod params, invoke', notes: `Promise.all of N × ${zodNotes}`, run: batchOf(ctx.batchSize, () => zodTool.invoke(runContext, argsText)), check: checkOf(zodTool) }];
    case 3:
      return [
        {
          name: 'openai-agents: invoke → function_call_output',
          notes: `${zodNotes}; the string result goes into JSON.stringify({type:"function_call_output", call_id, output}) (the Responses API input item the runner sends)`,
          run: async () => JSON.stringify({ type: 'function_call_output', call_id: callId, output: await zodTool.invoke(runContext, argsText) }),
          check: checkOf(zodTool),
        },
      ];
    case 4: {
      const agent = new Agent({ name: 'bench-agent' });
      return [
        {
          name: 'openai-agents: RunToolCallOutputItem',
          notes: 'retains new RunToolCallOutputItem({type:"function_call_result", ..., output:{type:"text", text: JSON.stringify(out)}}, agent, out), what RunResult.newItems holds',
          run: async () => {
            const out = await zodTool.invoke(runContext, argsText);
            return new RunToolCallOutputItem(
              { type: 'function_call_result', name: toolName, callId, status: 'completed', output: { type: 'text', text: typeof out === 'string' ? out : JSON.stringify(out) } },
              agent,
              out,
            );
          },
        },
      ];
    }
  }
  return [];
}

// ---------------------------------------------------------------- LangChain
// tool(fn, {name, schema}) from @langchain/core/tools; a JSON Schema is validated
// by @cfworker/json-schema inside StructuredTool.call, a zod schema by zod.
// invoke(args) takes already-parsed args (the chat model adapter parses the
// tool-call JSON), so run() includes JSON.parse(argsText). Invoking with a
// ToolCall ({type:"tool_call", id, name, args}) returns a ToolMessage instead.
// Only @langchain/core/tools is imported: @langchain/core/context (which LangGraph
// loads) would install a global AsyncLocalStorage and slow every await in the
// process - see the pollution check in the harness.
async function langchain(ctx) {
  const { tool } = await import('@langchain/core/tools');
  const { z } = await import('zod');
  const { argsText, callId, toolName } = ctx;
  const jsonTool = tool(ctx.makeBody('langchain'), { name: toolName, description: ctx.description, schema: structuredClone(ctx.echoSchema) });
  const zodTool = tool(ctx.makeBody('langchain'), { name: toolName, description: ctx.description, schema: z.object({ text: z.string(), n: z.number().int() }).strict() });
  const viaArgs = (t) => (text) => t.invoke(JSON.parse(text));
  const viaToolCall = (t) => (text) => t.invoke({ type: 'tool_call', id: callId, name: toolName, args: JSON.parse(text) });
  const jsonNotes = 'tool(fn, {schema: JSON Schema}).invoke(JSON.parse(argsText))';
  switch (ctx.group) {
    case 1:
      return [
        { name: 'langchain: JSON schema, invoke(args)', notes: jsonNotes, run: () => jsonTool.invoke(JSON.parse(argsText)), check: viaArgs(jsonTool) },
        { name: 'langchain: zod schema, invoke(args)', notes: 'tool(fn, {schema: z.object(...).strict()}).invoke(JSON.parse(argsText))', run: () => zodTool.invoke(JSON.parse(argsText)), check: viaArgs(zodTool) },
      ];
    case 2:
      return [{ name: 'langchain: JSON schema, invoke(args)', notes: `Promise.all of N × ${jsonNotes}`, run: batchOf(ctx.batchSize, () => jsonTool.invoke(JSON.parse(argsText))), check: viaArgs(jsonTool) }];
    case 3:
      return [
        {
          name: 'langchain: invoke(ToolCall) → ToolMessage',
          notes: 'tool(fn, {schema: JSON Schema}).invoke({type:"tool_call", id, name, args}) → ToolMessage; JSON.stringify({role:"tool", tool_call_id, content})',
          run: async () => {
            const msg = await viaToolCall(jsonTool)(argsText);
            return toolMessage(msg.tool_call_id, msg.content);
          },
          check: viaArgs(jsonTool),
        },
      ];
    case 4:
      return [{ name: 'langchain: ToolMessage', notes: 'retains the ToolMessage invoke(ToolCall) returns (what agent state keeps)', run: viaToolCall(jsonTool).bind(null, argsText) }];
  }
  return [];
}

const BUILDERS = { baseline, ai: aiSdk, mcp: mcpSdk, 'openai-agents': openaiAgents, langchain };

/**
 * Build the peer candidates for one group context.
 * @param {object} ctx  from workload.makeContext
 * @param {{exclude?: Set<string>, onFamily?: (family: string, phase: 'before'|'after') => void}} opts
 */
export async function peerCandidates(ctx, { exclude = new Set(), onFamily } = {}) {
  const out = [];
  for (const family of FAMILIES) {
    if (exclude.has(family)) continue;
    onFamily?.(family, 'before');
    let list;
    try {
      list = await BUILDERS[family](ctx);
    } catch (err) {
      list = [{ name: `${family}: (failed to build)`, buildError: err }];
    }
    onFamily?.(family, 'after');
    for (const c of list) {
      c.family ??= family;
      if (!exclude.has(c.name)) out.push(c);
    }
  }
  return out;
}
