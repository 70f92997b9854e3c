// Every built binary is what its platform package says it is: the file format and machine of its
// OS and CPU, the napi entry point exported, for Linux the C library it needs (glibc no newer
// than 2.17 for -gnu, musl for -musl), for macOS the oldest version it runs on and its signature. Binaries come from `npm run build:all` (npm/<platform>/);
// a target not built on this machine is skipped, saying so. Read with binutils' readelf (ELF) and
// llvm-objdump (Mach-O, PE), and the WebAssembly API (wasm).
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '..')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { napi: { targets: string[] } }
const have = (tool: string): boolean => spawnSync(tool, ['--version'], { stdio: 'ignore' }).status === 0
const tool = (cmd: string, args: string[]): string => execFileSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20 })

interface Target {
  triple: string
  dir: string | undefined
  file: string
}
const ABI: Record<string, string> = {
  'x86_64-unknown-linux-gnu': 'linux-x64-gnu',
  'aarch64-unknown-linux-gnu': 'linux-arm64-gnu',
  'x86_64-unknown-linux-musl': 'linux-x64-musl',
  'aarch64-unknown-linux-musl': 'linux-arm64-musl',
  'x86_64-apple-darwin': 'darwin-x64',
  'aarch64-apple-darwin': 'darwin-arm64',
  'x86_64-pc-windows-msvc': 'win32-x64-msvc',
  'aarch64-pc-windows-msvc': 'win32-arm64-msvc',
  'wasm32-wasip1-threads': 'wasm32-wasi',
}
const targets: Target[] = pkg.napi.targets.map((triple) => {
  const dir = ABI[triple]
  return { triple, dir, file: join(root, 'npm', dir ?? triple, triple.startsWith('wasm32') ? 'toolwire.wasm32-wasi.wasm' : `toolwire.${dir}.node`) }
})

it('knows every configured target', () => {
  expect(targets.filter((t) => t.dir === undefined).map((t) => t.triple)).toEqual([])
})

function elf(file: string, arch: 'x64' | 'arm64', libc: 'gnu' | 'musl'): void {
  const header = tool('readelf', ['-h', '-W', file])
  expect(header).toMatch(/Type:\s+DYN/)
  expect(header).toMatch(arch === 'x64' ? /Machine:\s+Advanced Micro Devices X86-64/ : /Machine:\s+AArch64/)
  const entry = tool('readelf', ['--dyn-syms', '-W', file]).split('\n').find((l) => / napi_register_module_v1$/.test(l))
  expect(entry).toMatch(/FUNC\s+GLOBAL\s+DEFAULT\s+\d+ napi_register_module_v1$/)
  const versions = [...new Set(tool('readelf', ['-V', '-W', file]).match(/GLIBC_\d+(\.\d+)+/g) ?? [])]
  const needed = [...tool('readelf', ['-d', '-W', file]).matchAll(/\(NEEDED\)\s+Shared library: \[(.+?)\]/g)].map((m) => m[1] ?? '')
  if (libc === 'gnu') {
    // the pattern above has a major and a minor version
    const newest = versions.map((v) => v.slice('GLIBC_'.length).split('.').map(Number) as [number, number]).sort((a, b) => b[0] - a[0] || b[1] - a[1])[0]
    expect(newest, `newest glibc symbol version of ${versions.join(' ')}`).toBeDefined()
    expect(newest![0] * 100 + newest![1]).toBeLessThanOrEqual(217)
  } else {
    expect(versions).toEqual([])
    expect(needed.some((n) => n.startsWith('libc.so') || n.includes('musl'))).toBe(true)
    expect(needed.some((n) => n.includes('ld-linux') || n === 'libc.so.6')).toBe(false)
  }
}

function macho(file: string, arch: 'x64' | 'arm64'): void {
  const headers = tool('llvm-objdump', ['--macho', '--private-headers', file])
  expect(headers).toMatch(arch === 'x64' ? /X86_64\s+ALL\s+0x00\s+DYLIB/ : /ARM64\s+ALL\s+0x00\s+DYLIB/)
  // Apple Silicon refuses unsigned code: the linker's ad-hoc signature must be there.
  if (arch === 'arm64') expect(headers).toContain('LC_CODE_SIGNATURE')
  // The oldest macOS that loads it: 10.13 on Intel (as napi-rs's template), 11 on Apple Silicon.
  const min = headers.match(/LC_BUILD_VERSION[\s\S]*?minos (\d+)\.(\d+)/) ?? headers.match(/LC_VERSION_MIN_MACOSX[\s\S]*?version (\d+)\.(\d+)/)
  expect(min, 'a minimum macOS version load command').not.toBeNull()
  expect(Number(min?.[1]) * 100 + Number(min?.[2])).toBeLessThanOrEqual(arch === 'x64' ? 1013 : 1100)
  expect(tool('llvm-objdump', ['--macho', '--exports-trie', file])).toMatch(/\b_napi_register_module_v1\b/)
}

function pe(file: string, arch: 'x64' | 'arm64'): void {
  const out = tool('llvm-objdump', ['-p', file])
  expect(out).toContain(arch === 'x64' ? 'file format coff-x86-64' : 'file format coff-arm64')
  expect(out).toMatch(/\bnapi_register_module_v1\b/)
}

function wasm(file: string): void {
  const mod = new WebAssembly.Module(readFileSync(file))
  const exports = WebAssembly.Module.exports(mod).map((e) => e.name)
  expect(exports).toContain('napi_register_wasm_v1')
  // wasm32-wasip1-threads: a shared memory imported from the host, and WASI imports.
  const imports = WebAssembly.Module.imports(mod)
  expect(imports).toContainEqual({ module: 'env', name: 'memory', kind: 'memory' })
  expect(imports.some((i) => i.module === 'wasi_snapshot_preview1')).toBe(true)
}

// musl's dynamic linker binds every symbol at load (no lazy binding), so loading the addon into a
// musl process proves each C library symbol it needs is in musl. Node's napi_* functions, which
// the addon takes from its host process, come from a stub library here.
const DLOPEN_C = `#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) { fprintf(stderr, "%s\\n", dlerror()); return 1; }
  return dlsym(h, "napi_register_module_v1") ? 0 : 2;
}
`
function loadsInMusl(file: string): void {
  const dir = mkdtempSync(join(tmpdir(), 'toolwire-musl-'))
  try {
    const napi = [...new Set(tool('readelf', ['--dyn-syms', '-W', file]).split('\n').map((l) => l.trim().split(/\s+/)).flatMap((f) => (f[6] === 'UND' && f[7]?.startsWith('napi_') ? [f[7].replace(/@.*/, '')] : [])))]
    expect(napi.length).toBeGreaterThan(10)
    writeFileSync(join(dir, 'stubs.c'), napi.map((n) => `int ${n}(void) { return 0; }\n`).join(''))
    writeFileSync(join(dir, 'dl.c'), DLOPEN_C)
    tool('musl-gcc', ['-shared', '-fPIC', '-o', join(dir, 'libnapi.so'), join(dir, 'stubs.c')])
    tool('musl-gcc', ['-o', join(dir, 'dl'), join(dir, 'dl.c')])
    const r = spawnSync(join(dir, 'dl'), [file], { encoding: 'utf8', env: { LD_PRELOAD: join(dir, 'libnapi.so') } })
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

for (const t of targets) {
  const [, , , abi] = t.triple.split('-')
  const arch = t.triple.startsWith('x86_64') ? 'x64' : 'arm64'
  const format = t.triple.startsWith('wasm32') ? 'wasm' : t.triple.includes('apple') ? 'macho' : t.triple.includes('windows') ? 'pe' : 'elf'
  const needs = { elf: 'readelf', macho: 'llvm-objdump', pe: 'llvm-objdump', wasm: '' }[format]
  const skip = !existsSync(t.file)
    ? `npm/${t.dir}/ holds no binary (npm run build:all -- --only=${t.dir})`
    : needs && !have(needs)
      ? `${needs} is not installed`
      : ''
  if (skip) console.log(`test/binaries.test.ts: ${t.dir} skipped: ${skip}`)
  describe.skipIf(skip !== '')(`${t.dir} (${t.triple})`, () => {
    it('has the format, machine and entry point of its platform', () => {
      if (format === 'elf') elf(t.file, arch, abi === 'musl' ? 'musl' : 'gnu')
      else if (format === 'macho') macho(t.file, arch)
      else if (format === 'pe') pe(t.file, arch)
      else wasm(t.file)
    })
    const musl = t.dir === `linux-${process.arch}-musl` && process.platform === 'linux' && have('musl-gcc')
    it.skipIf(!musl)('loads in a musl process of this machine (needs musl-gcc)', () => loadsInMusl(t.file))
  })
}
