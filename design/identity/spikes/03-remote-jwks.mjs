// Spike 03: what jose's createRemoteJWKSet (6.2.18) does with a JWKS endpoint that says
// `Cache-Control: max-age=0`, and with unknown-kid tokens while the endpoint fails. Durations are
// scaled down (cooldown 200 ms) so it runs in about a second.
// Run from the repository root: node design/identity/spikes/03-remote-jwks.mjs
import { createServer } from 'node:http'
import { createRemoteJWKSet, exportJWK, generateKeyPair, jwtVerify, SignJWT } from 'jose'

const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true })
const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }
let fetches = 0
let failing = false
const http = createServer((req, res) => {
  fetches++
  if (failing) return void res.writeHead(500).end()
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=0' }).end(JSON.stringify({ keys: [jwk] }))
})
await new Promise((r) => http.listen(0, '127.0.0.1', r))
const url = new URL(`http://127.0.0.1:${http.address().port}/jwks`)
const jwks = createRemoteJWKSet(url, { cooldownDuration: 200, cacheMaxAge: 60_000 })
const token = (kid) => new SignJWT({ sub: 'a' }).setProtectedHeader({ alg: 'ES256', kid }).setExpirationTime('5m').sign(privateKey)
const verify = async (kid) => jwtVerify(await token(kid), jwks, { algorithms: ['ES256'] }).then(() => 'ok', (e) => e.code)

console.log('1st verify (k1):', await verify('k1'), '| fetches', fetches)
console.log('2nd verify (k1), endpoint said max-age=0:', await verify('k1'), '| fetches', fetches, '(Cache-Control is not read: cacheMaxAge is fixed at creation)')
console.log('unknown kid within the cooldown:', await verify('k2'), '| fetches', fetches)
await new Promise((r) => setTimeout(r, 250))
failing = true
const out = []
for (let i = 0; i < 5; i++) out.push(await verify('k2'))
console.log('5 unknown-kid tokens after the cooldown, endpoint failing:', out.join(','), '| fetches', fetches, '(the cooldown counts from the last successful fetch)')
console.log('known kid k1 meanwhile:', await verify('k1'), '| fetches', fetches)
http.close()
