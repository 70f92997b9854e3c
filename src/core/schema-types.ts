/**
 * The types of the schemas a tool may declare: a JSON Schema or any Standard Schema
 * (zod 4, valibot, arktype, ...), and the input type a tool's `run` receives, inferred from
 * either. Types only: nothing here loads at run time.
 *
 * The Standard Schema interface is copied from `@standard-schema/spec` 1.1.0 (MIT), as that
 * spec asks libraries to do, so that toolwire's types need no dependency.
 */

/** A Standard Schema (https://standardschema.dev): what zod 4, valibot and arktype schemas are. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaV1.Props<Input, Output>
}

// eslint-disable-next-line @typescript-eslint/no-namespace
export declare namespace StandardSchemaV1 {
  /** The `~standard` properties. */
  export interface Props<Input = unknown, Output = Input> {
    readonly version: 1
    readonly vendor: string
    readonly validate: (value: unknown, options?: Options | undefined) => Result<Output> | Promise<Result<Output>>
    readonly types?: Types<Input, Output> | undefined
  }
  /** Options of `validate`. */
  export interface Options {
    readonly libraryOptions?: Record<string, unknown> | undefined
  }
  /** What `validate` returns. */
  export type Result<Output> = SuccessResult<Output> | FailureResult
  /** A success: the (possibly transformed) value. */
  export interface SuccessResult<Output> {
    readonly value: Output
    readonly issues?: undefined
  }
  /** A failure: its issues. */
  export interface FailureResult {
    readonly issues: ReadonlyArray<Issue>
  }
  /** One issue. */
  export interface Issue {
    readonly message: string
    readonly path?: ReadonlyArray<PropertyKey | PathSegment> | undefined
  }
  /** A path segment given as an object. */
  export interface PathSegment {
    readonly key: PropertyKey
  }
  /** The inferred types. */
  export interface Types<Input = unknown, Output = Input> {
    readonly input: Input
    readonly output: Output
  }
  /** The input type of a schema. */
  export type InferInput<Schema extends StandardSchemaV1> = NonNullable<Schema['~standard']['types']>['input']
  /** The output type of a schema: what a tool's `run` receives. */
  export type InferOutput<Schema extends StandardSchemaV1> = NonNullable<Schema['~standard']['types']>['output']
}

/** A JSON Schema (draft 2020-12 unless `$schema` says draft-07). */
export type JsonSchema = { readonly [key: string]: unknown } | boolean

/** What a tool's `inputSchema` or `outputSchema` may be: a JSON Schema or a Standard Schema. */
export type ToolSchema = JsonSchema | StandardSchemaV1

/** A JSON Schema object as a provider receives it (a tool's schema in a declaration). */
export type JsonSchemaObject = { [key: string]: unknown }

type Depth = readonly unknown[]

/** The properties of an object schema that are always present: `required` ones and those with a `default` (applied). */
type PresentKeys<S, P> =
  | (S extends { readonly required: readonly (infer R)[] } ? R : never)
  | { [K in keyof P]: P[K] extends { readonly default: unknown } ? K : never }[keyof P]

type Flatten<T> = { [K in keyof T]: T[K] } & {}

type ObjectOf<S, D extends Depth> = S extends { readonly properties: infer P }
  ? Flatten<
      { -readonly [K in keyof P as K extends PresentKeys<S, P> ? K : never]: FromJsonSchema<P[K], D> } & {
        -readonly [K in keyof P as K extends PresentKeys<S, P> ? never : K]?: FromJsonSchema<P[K], D>
      }
    >
  : { [key: string]: unknown }

type ArrayOf<S, D extends Depth> = S extends { readonly items: infer I } ? FromJsonSchema<I, D>[] : unknown[]

type TypeNamed<T, S, D extends Depth> = T extends 'string'
  ? string
  : T extends 'number' | 'integer'
    ? number
    : T extends 'boolean'
      ? boolean
      : T extends 'null'
        ? null
        : T extends 'array'
          ? ArrayOf<S, D>
          : T extends 'object'
            ? ObjectOf<S, D>
            : unknown

type Typed<T, S, D extends Depth> = T extends readonly (infer U)[]
  ? TypeNamed<U, S, D>
  : T extends string
    ? string extends T
      ? unknown // a widened `type: string`: the schema was not written `as const`
      : TypeNamed<T, S, D>
    : unknown

/**
 * The value type a JSON Schema literal written `as const` describes: `type` (one or a
 * list), `properties` with `required` (a property with a `default` is always present, since
 * defaults are applied), `items`, `enum`, `const`, `anyOf`/`oneOf`. Anything else, or a
 * schema not written `as const`, gives `unknown`. Nests at most 10 levels.
 */
export type FromJsonSchema<S, D extends Depth = []> = D['length'] extends 10
  ? unknown
  : S extends true
    ? unknown
    : S extends false
      ? never
      : S extends { readonly const: infer C }
        ? C
        : S extends { readonly enum: readonly (infer E)[] }
          ? E
          : S extends { readonly anyOf: readonly (infer A)[] }
            ? FromJsonSchema<A, [...D, 0]>
            : S extends { readonly oneOf: readonly (infer A)[] }
              ? FromJsonSchema<A, [...D, 0]>
              : S extends { readonly type: infer T }
                ? Typed<T, S, [...D, 0]>
                : unknown

/**
 * The input type a tool's `run` receives for a schema: a Standard Schema's output type, a
 * JSON Schema literal's type (`FromJsonSchema`, when written `as const` with a root `type`),
 * else `unknown`.
 */
export type InputOf<S> = S extends StandardSchemaV1 ? StandardSchemaV1.InferOutput<S> : S extends JsonSchema ? FromJsonSchema<S> : unknown
