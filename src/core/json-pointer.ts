/**
 * A schema's local `$ref` (`#` or `#/a/b`, RFC 6901 escapes `~0` `~1`, percent-decoded as a URI
 * fragment) resolved in the schema it came from.
 */

/** What the local `ref` points at in `root` (own members only), or `undefined` when it points at nothing or is not local. */
export function resolveLocalRef(root: unknown, ref: string): unknown {
  if (ref === '#') return root
  if (!ref.startsWith('#/')) return undefined
  let node: unknown = root
  for (const raw of ref.slice(2).split('/')) {
    let key: string
    try {
      key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
    } catch {
      return undefined
    }
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return undefined
    node = (node as Record<string, unknown>)[key]
  }
  return node
}
