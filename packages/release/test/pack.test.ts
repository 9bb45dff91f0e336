/**
 * The packages as a user gets them: `pnpm pack` of core, runtime and durable, the tarballs
 * installed with plain `npm install` into a scratch project outside the workspace (effect, xstate
 * and better-sqlite3 from the registry; no workspace links, no source condition), and a small
 * program against each package, type-checked against the packed declarations and run on the
 * packed JavaScript. Installing takes minutes on a busy machine, hence the long timeouts.
 */
import { execFile } from "node:child_process"
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  writeFileSync,
} from "node:fs"
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import ts from "typescript"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const run = promisify(execFile)
const repo = fileURLToPath(new URL("../../../", import.meta.url))
const consumers = fileURLToPath(new URL("./consumers/", import.meta.url))
const packages = ["core", "runtime", "durable"] as const
type Manifest = {
  readonly name: string
  readonly version: string
  readonly private?: boolean
  readonly exports: Record<string, unknown>
  readonly dependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
  readonly engines?: Record<string, string>
}
const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Manifest

/** The environment without what pnpm and vitest add, so npm and node behave as for a user. */
const cleanEnv = (): NodeJS.ProcessEnv =>
  Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !/^(npm_|pnpm_|VITEST|NODE_OPTIONS$|NODE_ENV$|TEST$|INIT_CWD$)/i.test(k),
    ),
  )

let scratch = ""
const tarballs = new Map<string, string>()
const installed = (pkg: string) => join(scratch, "node_modules", "@tickwork", pkg)

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "tickwork-pack-"))
  const packed = join(scratch, "tarballs")
  mkdirSync(packed)
  // One package at a time: each `pnpm pack` builds its dist first (`prepack: tsc -b`).
  for (const pkg of packages) {
    const dir = join(repo, "packages", pkg)
    await run("pnpm", ["pack", "--pack-destination", packed], { cwd: dir, env: cleanEnv() })
    const { name, version } = readJson(join(dir, "package.json"))
    tarballs.set(name, join(packed, `${name.replace("@", "").replace("/", "-")}-${version}.tgz`))
  }
  const rootManifest = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as {
    devDependencies: Record<string, string>
  }
  const effect = readJson(join(repo, "packages/runtime/node_modules/effect/package.json")).version
  const xstate = readJson(join(repo, "packages/runtime/node_modules/xstate/package.json")).version
  writeFileSync(
    join(scratch, "package.json"),
    JSON.stringify(
      {
        name: "tickwork-consumer",
        private: true,
        type: "module",
        dependencies: {
          ...Object.fromEntries([...tarballs].map(([name, file]) => [name, `file:${file}`])),
          effect,
          xstate,
        },
        devDependencies: { "@types/node": rootManifest.devDependencies["@types/node"] },
        // npm 11 asks for install scripts to be approved; better-sqlite3 builds its binding.
        allowScripts: { "better-sqlite3": true },
      },
      null,
      2,
    ),
  )
  await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: scratch,
    env: cleanEnv(),
    maxBuffer: 64 * 1024 * 1024,
  })
}, 900_000)

afterAll(async () => {
  if (scratch !== "") await rm(scratch, { recursive: true, force: true })
}, 120_000)

describe("the packed packages", () => {
  it.each(packages)(
    "%s ships dist, sources and README, and a publishable manifest",
    async (pkg) => {
      const manifest = readJson(join(repo, "packages", pkg, "package.json"))
      const tarball = tarballs.get(manifest.name) as string
      const { stdout } = await run("tar", ["-tzf", tarball])
      const files = stdout.split("\n").filter((f) => f !== "")
      expect(files).toContain("package/dist/src/index.js")
      expect(files).toContain("package/dist/src/index.d.ts")
      expect(files).toContain("package/src/index.ts")
      expect(files).toContain("package/README.md")
      expect(files.filter((f) => /^package\/(dist\/)?(test|bench)\//.test(f))).toEqual([])
      expect(files.filter((f) => f.endsWith(".tsbuildinfo"))).toEqual([])

      const packedManifest = readJson(join(installed(pkg), "package.json"))
      expect(packedManifest.private).toBeUndefined()
      expect(packedManifest.engines?.node).toBe(">=22.19")
      expect(packedManifest.peerDependencies?.effect).toBe("^4.1.0")
      expect(packedManifest.dependencies?.effect).toBeUndefined()
      expect(JSON.stringify(packedManifest)).not.toContain("workspace:")
      for (const [name, spec] of Object.entries(packedManifest.dependencies ?? {})) {
        if (name.startsWith("@tickwork/")) expect(spec).toBe(manifest.version)
      }
      // Every export the package declares (other than hidden paths) exists in the tarball.
      for (const [path, target] of Object.entries(packedManifest.exports)) {
        if (target === null) continue
        const { types, default: js } = target as { types: string; default: string }
        expect(files, path).toContain(`package/${types.slice(2)}`)
        expect(files, path).toContain(`package/${js.slice(2)}`)
      }
    },
    60_000,
  )

  it("resolve to the built JavaScript, with internals hidden", async () => {
    const script = `
      const out = {}
      for (const s of ["@tickwork/core", "@tickwork/runtime", "@tickwork/runtime/testing", "@tickwork/durable"])
        out[s] = import.meta.resolve(s)
      for (const s of ["@tickwork/core/internal/table", "@tickwork/runtime/internal/actor", "@tickwork/durable/bench"])
        out[s] = await import(s).then(() => "loaded", (e) => e.code)
      console.log(JSON.stringify(out))
    `
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
      cwd: scratch,
      env: cleanEnv(),
    })
    const at = (pkg: string, file: string) =>
      `file://${join(scratch, "node_modules/@tickwork", pkg, file)}`
    expect(JSON.parse(stdout)).toEqual({
      "@tickwork/core": at("core", "dist/src/index.js"),
      "@tickwork/runtime": at("runtime", "dist/src/index.js"),
      "@tickwork/runtime/testing": at("runtime", "dist/src/testing/index.js"),
      "@tickwork/durable": at("durable", "dist/src/index.js"),
      "@tickwork/core/internal/table": "ERR_PACKAGE_PATH_NOT_EXPORTED",
      "@tickwork/runtime/internal/actor": "ERR_PACKAGE_PATH_NOT_EXPORTED",
      "@tickwork/durable/bench": "ERR_PACKAGE_PATH_NOT_EXPORTED",
    })
    // Optional peers stay out of a plain install (the runtime consumer runs without them).
    expect(existsSync(join(scratch, "node_modules/@effect/platform-node"))).toBe(false)
    expect(existsSync(join(scratch, "node_modules/fast-check"))).toBe(false)
  }, 60_000)

  it("type-check a consumer's programs against the packed declarations", () => {
    const src = join(scratch, "src")
    mkdirSync(src, { recursive: true })
    const files = packages.map((pkg) => {
      const file = join(src, `${pkg}.ts`)
      copyFileSync(join(consumers, `${pkg}.ts`), file)
      return file
    })
    // A user's plain NodeNext settings: no custom conditions, so only `types` and `default` apply.
    const program = ts.createProgram(files, {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ["lib.es2022.d.ts"],
      types: ["node"],
      strict: true,
      skipLibCheck: true,
      noEmit: true,
    })
    const problems = ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file === undefined ? "" : `${d.file.fileName}: `
      return where + ts.flattenDiagnosticMessageText(d.messageText, "\n")
    })
    expect(problems).toEqual([])
    // The declarations came from the installed tarballs, not from the workspace.
    const tickwork = program
      .getSourceFiles()
      .map((f) => f.fileName)
      .filter((f) => f.includes("@tickwork/"))
    expect(tickwork.length).toBeGreaterThan(0)
    for (const f of tickwork) expect(f.startsWith(join(scratch, "node_modules"))).toBe(true)
  }, 120_000)

  it.each(packages)(
    "run a program against the installed %s",
    async (pkg) => {
      const code = readFileSync(join(consumers, `${pkg}.ts`), "utf8")
      const js = ts.transpileModule(code, {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      }).outputText
      const file = join(scratch, `${pkg}.mjs`)
      writeFileSync(file, js)
      const { stdout } = await run(process.execPath, [file], {
        cwd: scratch,
        env: cleanEnv(),
        timeout: 120_000,
      })
      expect(stdout).toContain(`${pkg}: ok`)
    },
    180_000,
  )
})
