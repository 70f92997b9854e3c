// Spike 01: the token checks of issue 23 with the installed jose (6.2.18), key resolution through
// createLocalJWKSet (what toolwire's own JWKS cache would hand jwtVerify), and the cost of one
// verification. Run from the repository root: node design/identity/spikes/01-jose-checks.mjs
import { createHmac } from 'node:crypto'
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify, SignJWT } from 'jose'

const issuer = 'http://127.0.0.1:9999/issuer'
const audience = 'http://127.0.0.1:8808/mcp'
const ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']
const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true })
const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }
const jwks = createLocalJWKSet({ keys: [jwk] })
const now = Math.floor(Date.now() / 1000)
const base = { iss: issuer, aud: audience, sub: 'alice', client_id: 'c1', scope: 'tools:read files:write', iat: now, exp: now + 300 }
const sign = (claims = {}, header = {}) => new SignJWT({ ...base, ...claims }).setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt', ...header }).sign(privateKey)
const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url')

async function verify(token, { requireAtJwt = false } = {}) {
  try {
    const { payload, protectedHeader } = await jwtVerify(token, jwks, { issuer, audience, algorithms: ALGS, clockTolerance: 60, requiredClaims: ['exp', 'sub'] })
    const typ = typeof protectedHeader.typ === 'string' ? protectedHeader.typ.toLowerCase().replace(/^application\//, '') : undefined
    if (!(typ === 'at+jwt' || (!requireAtJwt && typ === 'jwt'))) return `refused (typ ${JSON.stringify(protectedHeader.typ)})`
    const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : Array.isArray(payload.scp) ? payload.scp : []
    return `ok sub=${payload.sub} scopes=${scopes.join(',')}`
  } catch (e) {
    return `refused ${e.code ?? e.name}: ${e.message}`
  }
}

const good = await sign()
const [h, p, s] = good.split('.')
const flipped = `${h}.${p}.${s.slice(0, -2)}${s.at(-2) === 'A' ? 'B' : 'A'}${s.at(-1)}`
// HMAC "key confusion": HS256 over the header and payload with the public key's bytes as the secret
const hsHeader = b64({ alg: 'HS256', kid: 'k1', typ: 'at+jwt' })
const hsPayload = b64(base)
const hsSig = createHmac('sha256', JSON.stringify(jwk)).update(`${hsHeader}.${hsPayload}`).digest('base64url')
const cases = {
  valid: good,
  'aud as a list holding the audience': await sign({ aud: ['https://other.example', audience] }),
  'scp list instead of scope': await sign({ scope: undefined, scp: ['a', 'b'] }),
  'typ JWT': await sign({}, { typ: 'JWT' }),
  'typ application/at+jwt': await sign({}, { typ: 'application/at+jwt' }),
  'typ absent': await sign({}, { typ: undefined }),
  'expired 2 min ago': await sign({ exp: now - 120 }),
  'expired 30 s ago (inside the 60 s skew)': await sign({ exp: now - 30 }),
  'nbf in 2 min': await sign({ nbf: now + 120 }),
  'no exp': await sign({ exp: undefined }),
  'wrong audience': await sign({ aud: 'http://127.0.0.1:8808/other' }),
  'audience with a trailing slash': await sign({ aud: `${audience}/` }),
  'wrong issuer': await sign({ iss: 'http://127.0.0.1:9999/issuer/' }),
  'bad signature': flipped,
  'alg none': `${b64({ alg: 'none', typ: 'at+jwt' })}.${hsPayload}.`,
  'HS256 with the public key as secret': `${hsHeader}.${hsPayload}.${hsSig}`,
  'unknown kid': await sign({}, { kid: 'k2' }),
  malformed: 'not.a.jwt',
}
for (const [name, token] of Object.entries(cases)) console.log(`${name.padEnd(42)} -> ${await verify(token)}`)
console.log(`${'typ JWT with requireAtJwt'.padEnd(42)} -> ${await verify(cases['typ JWT'], { requireAtJwt: true })}`)

const N = 2000
const t0 = process.hrtime.bigint()
for (let i = 0; i < N; i++) await jwtVerify(good, jwks, { issuer, audience, algorithms: ALGS, clockTolerance: 60, requiredClaims: ['exp', 'sub'] })
const us = Number(process.hrtime.bigint() - t0) / 1000 / N
console.log(`ES256 jwtVerify with a local JWKS: ${us.toFixed(1)} µs per token (${N} tokens, node ${process.version})`)
