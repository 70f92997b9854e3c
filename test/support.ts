/** Small helpers shared by the behaviour tests. */

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise<void>((r) => setTimeout(r, ms))

/** A promise plus its resolver, for bodies the test releases by hand. */
export function gate<T = void>(): { promise: Promise<T>; release: (v: T) => void } {
  let release!: (v: T) => void
  const promise = new Promise<T>((r) => {
    release = r
  })
  return { promise, release }
}
