// Spike 05: the cost of one access-token verification (jwtVerify + createLocalJWKSet, jose 6.2.18) per
// algorithm, and of a verified-token cache hit (SHA-256 of the token + a Map lookup), on this machine.
// Run from the repository root: node design/identity/spikes/05-verify-cost.mjs
import { createHash } from 'node:crypto'
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify, SignJWT } from 'jose'

const iss = 'http://127.0.0.1:9999', aud = 'http://127.0.0.1:8808/mcp'
const N = 2000
for (const alg of ['ES256', 'RS256', 'PS256', 'EdDSA']) {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true })
  const jwks = createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k', alg }] })
  const token = await new SignJWT({ sub: 'alice', scope: 'a b' }).setProtectedHeader({ alg, kid: 'k', typ: 'at+jwt' }).setIssuer(iss).setAudience(aud).setIssuedAt().setExpirationTime('5m').sign(privateKey)
  const opts = { issuer: iss, audience: aud, algorithms: [alg], clockTolerance: 60, requiredClaims: ['exp', 'sub'] }
  for (let i = 0; i < 200; i++) await jwtVerify(token, jwks, opts)
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < N; i++) await jwtVerify(token, jwks, opts)
  console.log(`${alg.padEnd(6)} ${(Number(process.hrtime.bigint() - t0) / 1000 / N).toFixed(1)} µs per verification`)
}
const cache = new Map([[createHash('sha256').update('x'.repeat(800)).digest('base64url'), { exp: Infinity }]])
const tok = 'x'.repeat(800)
const t1 = process.hrtime.bigint()
for (let i = 0; i < N * 10; i++) cache.get(createHash('sha256').update(tok).digest('base64url'))
console.log(`cache hit (SHA-256 of an 800-character token + Map.get): ${(Number(process.hrtime.bigint() - t1) / 1000 / (N * 10)).toFixed(1)} µs; node ${process.version}, load ${(await import('node:os')).loadavg()[0].toFixed(2)}`)
