/**
 * Registration: the checks of the manager's options and of a tool definition, the registered
 * tools (`ToolEntry` by name) and what their pipelines serve (listeners, spans once a tracer
 * provider is registered, evidence, a store).
 */
import { CircuitBreaker } from './breaker.js'
import { compose, limiterOf, type PipelineFeatures } from './pipeline.js'
import { outcomeCallbackOf } from './outcome.js'
import { checkToolName, prepareSchemas } from '../core/schema-source.js'
import { sensitiveKeys } from '../core/redact.js'
import { flatArgNamesOf } from '../core/flat-args.js'
import { isScopeToken, type ImpliedScopes } from '../core/principal.js'
import type { SchemaCompiler } from '../core/validate.js'
import type { MetricsBuffer } from '../observe/metrics.js'
import type { CallTracer } from '../observe/telemetry.js'
import type { PermissionHook, RegisterOptions, ToolDefinition } from './tool.js'
import type { ToolEntry } from './types.js'
import type { Events } from './events.js'

/** The manager options that registration and its checks read (a part of `ToolManagerOptions`). */
export interface RegistrationOptions {
  readonly development?: boolean
  readonly permission?: PermissionHook
  readonly timeoutMs?: number
  readonly queueLimit?: number
  readonly confirmTtlMs?: number
  readonly undoLimit?: number
  readonly leaseMs?: number
  readonly scopes?: readonly string[]
  readonly impliedScopes?: ImpliedScopes
}

/** The longest `confirmTtlMs` or `leaseMs`: a year. */
const MAX_DATED_MS = 365 * 24 * 60 * 60 * 1000

/** How often (ms) a call asks whether a tracer provider was registered, while none is. */
const TRACER_CHECK_MS = 100

/** A finite number of ms ≥ 0 that a timer can hold (`longRunning.afterMs`). */
function isDelay(n: unknown): boolean {
  return typeof n === 'number' && n >= 0 && n <= 2 ** 31 - 1
}

/** A non-negative integer, or `Infinity` (no bound). */
function isCount(n: unknown): boolean {
  return n === Infinity || (Number.isSafeInteger(n) && (n as number) >= 0)
}

/** Every option of `new ToolManager()` (`ToolManagerOptions`); others are ignored. */
const MANAGER_OPTIONS = [
  'development', 'permission', 'timeoutMs', 'queueLimit', 'confirmTtlMs', 'undoLimit', 'evidence', 'telemetry', 'store',
  'storeKey', 'approvalSecret', 'leaseMs', 'scopes', 'impliedScopes', 'formats', 'schemaResources', 'maxInputValues',
] as const

/** Whether `v` is an object (not `null`, not an array). */
function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/**
 * The options given to `new ToolManager()`, each read once (a getter or a Proxy trap that
 * throws is a TypeError naming the option, with what was thrown as its cause) into a frozen
 * copy the manager keeps, then checked by {@link checkManagerOptions}.
 */
export function readManagerOptions<T extends object>(options: T): T {
  if (typeof options !== 'object' || options === null) throw new TypeError('toolwire: new ToolManager() takes an options object')
  const copy: Record<string, unknown> = {}
  for (const key of MANAGER_OPTIONS) {
    let value: unknown
    try {
      value = (options as Record<string, unknown>)[key]
    } catch (err) {
      throw new TypeError(`toolwire: the option ${key} of new ToolManager() cannot be read (reading it threw; the error is this one's cause)`, { cause: err })
    }
    if (value !== undefined) copy[key] = value
  }
  checkManagerOptions(copy)
  return Object.freeze(copy) as T
}

/**
 * The manager's options, checked as a tool's own are: a TypeError naming the option, never a
 * manager that quietly misbehaves (a negative timeout firing at once, a lease the store
 * cannot hold, a permission hook that is not a function refusing every call).
 */
function checkManagerOptions(options: RegistrationOptions & Record<string, unknown>): void {
  const kind = (name: string, what: string, ok: (v: unknown) => boolean): void => {
    if (options[name] !== undefined && !ok(options[name])) throw new TypeError(`toolwire: ${name} must be ${what}`)
  }
  kind('permission', 'a function (call) => decision', (v) => typeof v === 'function')
  kind('formats', 'a boolean', (v) => typeof v === 'boolean')
  kind('store', 'a store (toolwire/store: openSqliteStore, openPostgresStore, memoryStore, or a ToolStore of your own)', isRecord)
  kind('evidence', 'an evidence store (an object with an append(record) method)', (v) => isRecord(v) && typeof v.append === 'function')
  const flag = (v: unknown): boolean => v === undefined || typeof v === 'boolean'
  kind('telemetry', 'an object ({ tracing?, recordContent?, principal? }; tracing and recordContent booleans)', (v) => isRecord(v) && flag(v.tracing) && flag(v.recordContent))
  kind('schemaResources', 'an object mapping a URI to a JSON Schema (an object or a boolean)', (v) => isRecord(v) && Object.values(v).every((r) => typeof r === 'boolean' || isRecord(r)))
  // a confirmation's expiry and a lease are dated in the store (milliseconds since the epoch): at most a year
  const positive = (name: 'timeoutMs' | 'confirmTtlMs' | 'leaseMs', dated: boolean): void => {
    const v: unknown = options[name]
    if (v !== undefined && !(typeof v === 'number' && v > 0 && (!dated || v <= MAX_DATED_MS))) {
      throw new TypeError(`toolwire: ${name} must be a positive number${dated ? ' of at most a year (31,536,000,000 ms)' : ''}`)
    }
  }
  positive('timeoutMs', false)
  positive('confirmTtlMs', true)
  positive('leaseMs', true)
  if (options.queueLimit !== undefined && !isCount(options.queueLimit)) throw new TypeError('toolwire: queueLimit must be a non-negative integer or Infinity')
  if (options.undoLimit !== undefined && !isCount(options.undoLimit)) throw new TypeError('toolwire: undoLimit must be a non-negative integer or Infinity')
  if (options.development !== undefined && typeof options.development !== 'boolean') throw new TypeError('toolwire: development must be a boolean')
  if (options.scopes !== undefined) checkScopeList(options.scopes, 'scopes')
  const implied: unknown = options.impliedScopes
  if (implied !== undefined) {
    if (typeof implied !== 'object' || implied === null || Array.isArray(implied)) throw new TypeError('toolwire: impliedScopes must be an object mapping a scope to the scopes it grants')
    for (const [scope, grants] of Object.entries(implied)) {
      if (!isScopeToken(scope)) throw new TypeError(`toolwire: impliedScopes key ${JSON.stringify(scope)} is not a scope (1 to 256 visible ASCII characters, no space, '"' or '\\')`)
      checkScopeList(grants, `impliedScopes[${JSON.stringify(scope)}]`)
    }
  }
}

/** A TypeError unless `retry` is absent or `{ attempts?, baseMs?, maxMs? }` (a positive integer and two numbers of ms ≥ 0). */
function checkRetry(name: string, retry: unknown): void {
  if (retry === undefined) return
  const ms = (v: unknown): boolean => v === undefined || (typeof v === 'number' && v >= 0 && v <= 2 ** 31 - 1)
  const r = retry as { attempts?: unknown; baseMs?: unknown; maxMs?: unknown }
  if (!isRecord(retry) || !(r.attempts === undefined || (Number.isSafeInteger(r.attempts) && (r.attempts as number) >= 1)) || !ms(r.baseMs) || !ms(r.maxMs)) {
    throw new TypeError(`toolwire: tool "${name}" retry must be { attempts?, baseMs?, maxMs? }: attempts a positive integer, baseMs and maxMs numbers of ms from 0 to 2**31 - 1`)
  }
}

/** A TypeError naming `what` unless `scopes` is an array of scope tokens; returns a frozen copy without duplicates. */
export function checkScopeList(scopes: unknown, what: string): readonly string[] {
  if (!Array.isArray(scopes) || !scopes.every(isScopeToken)) {
    throw new TypeError(`toolwire: ${what} must be an array of scopes (each 1 to 256 visible ASCII characters, no space, '"' or '\\')`)
  }
  return Object.freeze([...new Set(scopes)])
}

/** What a registry is made from: the manager's options and what its pipelines serve. */
export interface RegistryConfig {
  readonly options: RegistrationOptions
  readonly compiler: SchemaCompiler
  /** The manager's `scopes`: those of a tool that declares none. */
  readonly defaultScopes: readonly string[]
  readonly development: boolean
  readonly tracer: CallTracer | undefined
  /** Whether settled calls are appended to an evidence store. */
  readonly evidence: boolean
  /** Whether the manager has a durable store. */
  readonly store: boolean
  readonly metrics: MetricsBuffer
  readonly events: Events
}

/** The registered tools of one manager, with their pipelines kept matching what the manager serves. */
export class Registry {
  /** The registered tools by name, in registration order. */
  readonly tools = new Map<string, ToolEntry>()
  private readonly config: RegistryConfig
  /** The tracer has a provider: pipelines have span stages (else a probe stage, see `tracerReady`). */
  private tracerOn = false
  private tracerCheckedAt = -Infinity

  constructor(config: RegistryConfig) {
    this.config = config
  }

  /**
   * Registers a tool (`tm.register`).
   * @throws TypeError for a malformed definition; SchemaError for a schema that does not compile.
   */
  register(tool: ToolDefinition<never>, options: RegisterOptions): void {
    if (typeof tool !== 'object' || tool === null) throw new TypeError('toolwire: register() takes a tool definition object')
    const { name } = tool
    if (typeof name !== 'string' || name.length === 0) throw new TypeError('toolwire: a tool needs a non-empty string name')
    checkToolName(name, options.anyName)
    if (typeof tool.run !== 'function') throw new TypeError(`toolwire: tool "${name}" needs a run(input, ctx) function`)
    if (this.tools.has(name) && options.replace !== true) {
      throw new Error(`toolwire: a tool named "${name}" is already registered; pass { replace: true } to replace it`)
    }
    if (tool.timeoutMs !== undefined && !(typeof tool.timeoutMs === 'number' && tool.timeoutMs > 0)) {
      throw new TypeError(`toolwire: tool "${name}" timeoutMs must be a positive number`)
    }
    const lr = tool.longRunning as unknown
    if (lr !== undefined && lr !== true && !(typeof lr === 'object' && lr !== null && isDelay((lr as { afterMs?: unknown }).afterMs))) {
      throw new TypeError(`toolwire: tool "${name}" longRunning must be true or { afterMs } (a number of ms ≥ 0)`)
    }
    const { options: managerOptions, compiler } = this.config
    const c = tool.concurrency
    if (c !== undefined && typeof c !== 'number' && !isRecord(c)) throw new TypeError(`toolwire: tool "${name}" concurrency must be a positive integer or { limit, queue? }`)
    const limit = c === undefined ? Infinity : typeof c === 'number' ? c : c.limit
    if (!(limit === Infinity || (Number.isInteger(limit) && limit > 0))) {
      throw new TypeError(`toolwire: tool "${name}" concurrency must be a positive integer`)
    }
    const queueLimit = typeof c === 'object' && c.queue !== undefined ? c.queue : (managerOptions.queueLimit ?? 100)
    if (!isCount(queueLimit)) throw new TypeError(`toolwire: tool "${name}" concurrency.queue must be a non-negative integer or Infinity`)
    if (tool.confirmVia !== undefined && tool.confirmVia !== 'form' && tool.confirmVia !== 'url') {
      throw new TypeError(`toolwire: tool "${name}" confirmVia must be 'form' or 'url'`)
    }
    if (tool.retry !== undefined && tool.hints?.idempotent !== true) {
      throw new TypeError(`toolwire: tool "${name}" sets retry but is not marked hints.idempotent; only idempotent tools are retried`)
    }
    checkRetry(name, tool.retry)
    if (tool.breaker !== undefined && !isRecord(tool.breaker)) throw new TypeError(`toolwire: tool "${name}" breaker must be { failures, cooldownMs }`)
    // a JSON Schema or a Standard Schema; the kept definition advertises JSON Schema and its run gets the validated value
    const schemas = prepareSchemas(tool, compiler)
    const sensitive = tool.sensitive === undefined ? undefined : new Set(tool.sensitive)
    const compiled: Omit<ToolEntry, 'pipeline'> = {
      def: schemas.def as ToolDefinition<never>,
      name,
      validate: schemas.validate,
      flatArgs: flatArgNamesOf(schemas.def.inputSchema, compiler.maxInputValues),
      validateOutput: schemas.validateOutput,
      untrusted: tool.hints?.untrustedContent === true,
      timeoutMs: tool.timeoutMs ?? managerOptions.timeoutMs,
      permissionHooks: [managerOptions.permission, tool.permission].filter((h): h is PermissionHook => h !== undefined),
      scopes: tool.scopes === undefined ? this.config.defaultScopes : checkScopeList(tool.scopes, `tool "${name}" scopes`),
      limiter: limiterOf(limit, queueLimit),
      breaker: tool.breaker === undefined ? undefined : new CircuitBreaker(tool.breaker),
      outcome: outcomeCallbackOf(tool as { execute?: unknown }),
      sensitive,
      sensitiveKey: sensitiveKeys(sensitive),
      metricsId: this.config.metrics.register(name),
    }
    const entry: ToolEntry = Object.assign(compiled, { pipeline: compose(compiled, this.features()) })
    this.tools.set(name, entry)
  }

  /** What the manager has that pipeline stages serve. */
  private features(): PipelineFeatures {
    const { events, tracer } = this.config
    return {
      callStart: events.listeners.call_start !== undefined,
      callEnd: events.listeners.call_end !== undefined,
      tracer: this.spans(),
      tracerProbe: tracer !== undefined && !this.tracerOn,
      evidence: this.config.evidence,
      development: this.config.development,
      store: this.config.store,
    }
  }

  /** Whether calls make spans: a tracer whose provider is registered (checked again while none is). */
  private spans(): boolean {
    const { tracer } = this.config
    if (tracer !== undefined && !this.tracerOn) this.tracerOn = tracer.ready()
    return this.tracerOn
  }

  /**
   * While the tracer has no provider, a call asks at most every {@link TRACER_CHECK_MS} whether
   * one was registered since; when one was, every pipeline gets its span stages.
   */
  tracerReady(now: number): boolean {
    if (this.tracerOn) return true
    if (now - this.tracerCheckedAt < TRACER_CHECK_MS) return false
    this.tracerCheckedAt = now
    if (!this.spans()) return false
    this.recompose()
    return true
  }

  /** Recomposes every tool's pipeline (a listener a stage serves came or went). */
  recompose(): void {
    const features = this.features()
    for (const entry of this.tools.values()) entry.pipeline = compose(entry, features)
  }
}
