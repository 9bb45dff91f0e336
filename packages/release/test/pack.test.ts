/**
 * The packages as a user gets them: `pnpm pack` of core, runtime, durable and cli, the tarballs
 * installed with plain `npm install` into a scratch project outside the workspace (effect, xstate,
 * better-sqlite3 and @effect/platform-node from the registry; no workspace links, no source
 * condition). npm must print no engine or peer warning; a program against each package is
 * type-checked against the packed declarations (with `skipLibCheck: false`) and run on the packed
 * JavaScript; and the `tickwork` command runs through `npx`, on a SQLite file and a PostgreSQL
 * database filled by a program using the packed durable package; and a team's first day
 * (`consumers/adoption.ts`: declared tasks over two starts, run-now, retry, kept results, the
 * testing layer) with the CLI's `status`, `retry`, `trigger` and `ledger` between the starts, and
 * flow control as a team coming from graphile-worker, BullMQ or pg-boss tries it
 * (`consumers/flow.ts`), all in the same install. Installing takes minutes on a
 * busy machine, hence the long timeouts; nothing waits on a timer.
 */
import { execFile, spawn } from "node:child_process"
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
import { fileURLToPath, pathToFileURL } from "node:url"
import { promisify } from "node:util"
import { freshDatabase } from "@tickwork/testkit/Postgres"
import ts from "typescript"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const run = promisify(execFile)
const repo = fileURLToPath(new URL("../../../", import.meta.url))
const consumers = fileURLToPath(new URL("./consumers/", import.meta.url))
const packages = ["core", "runtime", "durable", "cli"] as const
type Manifest = {
  readonly name: string
  readonly version: string
  readonly private?: boolean
  readonly bin?: Record<string, string>
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
/** What `npm install` printed on stderr at `--loglevel=warn`: its warnings. */
let installLog = ""
const tarballs = new Map<string, string>()
const installed = (pkg: string) => join(scratch, "node_modules", "@tickwork", pkg)
const cliVersion = readJson(join(repo, "packages/cli/package.json")).version

/** A consumer program (`test/consumers/<name>.ts`) compiled to `<scratch>/<name>.mjs`. */
const compile = (name: string): string => {
  const code = readFileSync(join(consumers, `${name}.ts`), "utf8")
  const js = ts.transpileModule(code, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText
  const file = join(scratch, `${name}.mjs`)
  writeFileSync(file, js)
  return file
}

/**
 * `npx tickwork …` in the scratch project. `--no` makes npx use the installed bin or fail, never
 * fetch a package named `tickwork` from the registry; after `--` every argument is the command's
 * (without it, npx takes `--no tickwork --version` as asking for npm's own version).
 */
const tickwork = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = cleanEnv()) =>
  run("npx", ["--no", "--", "tickwork", ...args], { cwd: scratch, env, timeout: 120_000 })

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
        // No `allowScripts`: nothing here needs an install script (better-sqlite3 13 loads an
        // N-API prebuild from its package), so the install is what a user's first one is.
        devDependencies: { "@types/node": rootManifest.devDependencies["@types/node"] },
      },
      null,
      2,
    ),
  )
  // No flags that change what is installed: warnings show at `warn`, and are asserted below.
  const { stderr } = await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=warn"], {
    cwd: scratch,
    env: cleanEnv(),
    maxBuffer: 64 * 1024 * 1024,
  })
  installLog = stderr
}, 900_000)

afterAll(async () => {
  if (scratch !== "") await rm(scratch, { recursive: true, force: true })
}, 120_000)

describe("the packed packages", () => {
  it("install with plain npm without engine or peer warnings", async () => {
    const warnings = installLog
      .split("\n")
      .filter((line) => /EBADENGINE|engine|peer|ERESOLVE|conflict/i.test(line))
    expect(warnings).toEqual([])
    // npm's own check of the tree: it exits non-zero on a missing, invalid or extraneous package.
    await run("npm", ["ls", "--all"], { cwd: scratch, env: cleanEnv(), maxBuffer: 1 << 24 })
  }, 120_000)

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
      if (pkg === "core") expect(files).toContain("package/SPEC.md")
      // Nothing but the manifest, the README, the sources and their build (and the cli's bin, and
      // core's behaviour contract, SPEC.md, which the others' docs cite).
      expect(
        files.filter(
          (f) =>
            !/^package\/(package\.json|README\.md|SPEC\.md|src\/.+|dist\/src\/.+|bin\/tickwork\.js)$/.test(
              f,
            ),
        ),
      ).toEqual([])
      expect(files.filter((f) => /\/(test|bench)\//.test(f))).toEqual([])
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

  it("cli ships its bin with a shebang, platform-node as a dependency, effect and xstate as peers", () => {
    const manifest = readJson(join(installed("cli"), "package.json"))
    expect(manifest.bin).toEqual({ tickwork: "./bin/tickwork.js" })
    const bin = readFileSync(join(installed("cli"), "bin/tickwork.js"), "utf8")
    expect(bin.split("\n")[0]).toBe("#!/usr/bin/env node")
    expect(existsSync(join(installed("cli"), "dist/src/bin.js"))).toBe(true)
    expect(manifest.dependencies?.["@effect/platform-node"]).toBe("4.1.0")
    expect(manifest.peerDependencies?.xstate).toBe("^5.33.0")
    expect(manifest.dependencies?.xstate).toBeUndefined()
    // The declarations name better-sqlite3, so its types are a dependency, not a devDependency.
    expect(readJson(join(installed("durable"), "package.json")).dependencies).toHaveProperty(
      "@types/better-sqlite3",
    )
  })

  it("resolve to the built JavaScript, with internals hidden", async () => {
    const script = `
      const out = {}
      for (const s of ["@tickwork/core", "@tickwork/runtime", "@tickwork/runtime/testing", "@tickwork/durable", "@tickwork/durable/testing", "@tickwork/cli"])
        out[s] = import.meta.resolve(s)
      for (const s of ["@tickwork/core/internal/table", "@tickwork/runtime/internal/actor", "@tickwork/durable/bench", "@tickwork/cli/internal/x"])
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
      "@tickwork/durable/testing": at("durable", "dist/src/testing/index.js"),
      "@tickwork/cli": at("cli", "dist/src/index.js"),
      "@tickwork/core/internal/table": "ERR_PACKAGE_PATH_NOT_EXPORTED",
      "@tickwork/runtime/internal/actor": "ERR_PACKAGE_PATH_NOT_EXPORTED",
      "@tickwork/durable/bench": "ERR_PACKAGE_PATH_NOT_EXPORTED",
      "@tickwork/cli/internal/x": "ERR_PACKAGE_PATH_NOT_EXPORTED",
    })
    // Optional peers stay out of a plain install. (@effect/platform-node, the runtime's other
    // optional peer, is here as a dependency of the cli.)
    expect(existsSync(join(scratch, "node_modules/fast-check"))).toBe(false)
  }, 60_000)

  describe("type-check a consumer's programs against the packed declarations", () => {
    const programs = [...packages, "store", "adoption", "flow"]
    const check = (options: ts.CompilerOptions) => {
      const src = join(scratch, "src")
      mkdirSync(src, { recursive: true })
      const files = programs.map((name) => {
        const file = join(src, `${name}.ts`)
        copyFileSync(join(consumers, `${name}.ts`), file)
        return file
      })
      // A user's NodeNext settings: no custom conditions, so only `types` and `default` apply.
      // skipLibCheck is off, so every declaration file the programs reach is checked, ours too.
      const program = ts.createProgram(files, {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        types: ["node"],
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        ...options,
      })
      const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ({
        file: d.file?.fileName ?? "",
        message: ts.flattenDiagnosticMessageText(d.messageText, "\n"),
      }))
      return { program, diagnostics }
    }

    it("with a typical application's settings, without a single error", () => {
      // `lib` has DOM: effect 4.1.0's crypto declarations name the DOM type `CryptoKey`.
      const { program, diagnostics } = check({ lib: ["lib.es2022.d.ts", "lib.dom.d.ts"] })
      expect(diagnostics).toEqual([])
      // The declarations came from the installed tarballs, not from the workspace, and
      // include durable's SQLite client, whose declaration imports better-sqlite3's types.
      const tickwork = program
        .getSourceFiles()
        .map((f) => f.fileName)
        .filter((f) => f.includes("@tickwork/"))
      for (const pkg of packages) {
        expect(tickwork.some((f) => f.includes(`/@tickwork/${pkg}/dist/src/`))).toBe(true)
      }
      for (const f of tickwork) expect(f.startsWith(join(scratch, "node_modules"))).toBe(true)
      expect(tickwork).toContain(
        join(scratch, "node_modules/@tickwork/durable/dist/src/SqliteClient.d.ts"),
      )
    }, 120_000)

    it("with the workspace's strict settings, without an error in our declarations", () => {
      // Without DOM and with exactOptionalPropertyTypes, effect's crypto declarations (TS2304,
      // `CryptoKey`) and xstate's setup.d.ts (TS2344) fail on their own: a program importing
      // only `effect` and `xstate` gets the same errors. Ours must stay clean regardless.
      const { diagnostics } = check({
        lib: ["lib.es2022.d.ts"],
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
      })
      const thirdParty = /\/node_modules\/(effect|xstate)\//
      expect(diagnostics.filter((d) => !thirdParty.test(d.file))).toEqual([])
    }, 120_000)
  })

  it.each(packages)(
    "run a program against the installed %s",
    async (pkg) => {
      const { stdout } = await run(process.execPath, [compile(pkg)], {
        cwd: scratch,
        env: cleanEnv(),
        timeout: 120_000,
      })
      expect(stdout).toContain(`${pkg}: ok`)
    },
    180_000,
  )
})

describe("npx tickwork in the scratch project", () => {
  it("prints its version", async () => {
    const { stdout } = await tickwork(["--version"])
    expect(stdout.trim()).toBe(`tickwork v${cliVersion}`)
  }, 180_000)

  it("explains a cron expression", async () => {
    const { stdout } = await tickwork([
      ...["explain", "0 9 * * *", "--count", "1"],
      ...["--tz", "Europe/Berlin", "--from", "2026-01-01T00:00:00Z"],
    ])
    expect(stdout).toBe("# at 09:00\n2026-01-01T08:00:00Z  Thu 2026-01-01 09:00:00 +01:00\n")
  }, 180_000)

  it("never loads redis, a peer of @effect/platform-node that installs may leave out", async () => {
    // A resolve hook that refuses `redis`: the bin runs as on an install without it.
    const hook = join(scratch, "no-redis.mjs")
    writeFileSync(
      hook,
      `import { registerHooks } from "node:module"
registerHooks({
  resolve(specifier, context, next) {
    if (specifier === "redis" || specifier.startsWith("@redis/")) throw new Error("redis was loaded")
    return next(specifier, context)
  },
})
`,
    )
    const env = { ...cleanEnv(), NODE_OPTIONS: `--import=${pathToFileURL(hook).href}` }
    // The hook works: platform-node's index loads redis (through NodeRedis) and is refused.
    const index = run(
      process.execPath,
      ["--input-type=module", "-e", 'await import("@effect/platform-node")'],
      {
        cwd: scratch,
        env,
      },
    )
    await expect(index).rejects.toThrow(/redis was loaded/)
    const { stdout } = await tickwork(
      ["explain", "0 9 * * *", "--count", "1", "--from", "2026-01-01T00:00:00Z"],
      env,
    )
    expect(stdout).toBe("# at 09:00\n2026-01-01T09:00:00Z  Thu 2026-01-01 09:00:00 +00:00\n")
  }, 180_000)

  /** Fills the store with the store consumer, then lists its tasks with `npx tickwork tasks`. */
  const listTasks = async (store: string) => {
    const filled = await run(process.execPath, [compile("store"), store], {
      cwd: scratch,
      env: cleanEnv(),
      timeout: 120_000,
    })
    expect(filled.stdout).toContain("store: ok")
    const text = await tickwork(["tasks", "--store", store])
    const json = await tickwork(["tasks", "--store", store, "--json"])
    return {
      text: text.stdout,
      page: JSON.parse(json.stdout) as {
        readonly total: number
        readonly tasks: ReadonlyArray<{ id: string; state: string; handler: string }>
      },
    }
  }
  const expectTwoTasks = ({ text, page }: Awaited<ReturnType<typeof listTasks>>) => {
    expect(page.total).toBe(2)
    expect(page.tasks.map(({ id, state, handler }) => ({ id, state, handler }))).toEqual([
      { id: "nightly-report", state: "scheduled", handler: "report.build" },
      { id: "welcome-ada", state: "scheduled", handler: "mail.send" },
    ])
    expect(text).toMatch(/^nightly-report +scheduled +report\.build +cron "0 2 \* \* \*"/m)
    expect(text).toMatch(/^welcome-ada +scheduled +mail\.send +once /m)
    expect(text.trimEnd().split("\n").at(-1)).toBe("2 tasks")
  }

  /**
   * Serves `tickwork dashboard --store <store> --port 0` from the bin npm linked (what npx runs;
   * started directly so the SIGTERM reaches it, not npx), reads its page and snapshot as a
   * browser would, then stops it with SIGTERM, which must end it cleanly (exit code 0); the ids
   * of the tasks it showed.
   */
  const dashboard = async (store: string) => {
    const bin = join(scratch, "node_modules", ".bin", "tickwork")
    const p = spawn(bin, ["dashboard", "--store", store, "--port", "0"], {
      cwd: scratch,
      env: cleanEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    })
    const exited = new Promise<number | null>((resolve) => p.once("exit", (code) => resolve(code)))
    try {
      let output = ""
      const url = await new Promise<string>((resolve, reject) => {
        const onData = (data: Buffer) => {
          output += String(data)
          const match = /tickwork dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(output)
          if (match !== null) resolve(match[1] as string)
        }
        p.stdout?.on("data", onData)
        p.stderr?.on("data", onData)
        void exited.then((code) => reject(new Error(`dashboard exited (${code}):\n${output}`)))
      })
      const page = await fetch(url)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain("<title>")
      const snapshot = (await (await fetch(`${url}api/snapshot`)).json()) as {
        readonly readOnly: boolean
        readonly tasks: { readonly tasks: ReadonlyArray<{ readonly id: string }> }
      }
      expect(snapshot.readOnly).toBe(true)
      return snapshot.tasks.tasks.map((t) => t.id).sort()
    } finally {
      p.kill("SIGTERM")
      expect(await exited).toBe(0)
    }
  }

  it("adopted on a SQLite file: declared tasks over two starts, run-now, retry, results, and the CLI's actions between them", async () => {
    const file = join(mkdtempSync(join(scratch, "adoption-")), "tasks.db")
    const program = compile("adoption")
    /** Starts the service (deployment `boot`) on the file: the lines it printed, logs left out. */
    const start = async (boot: "1" | "2") => {
      const { stdout } = await run(process.execPath, [program, file, boot], {
        cwd: scratch,
        env: cleanEnv(),
        timeout: 120_000,
      })
      return stdout
        .split("\n")
        .filter((l) => /^(adoption|boot|trigger|retry|charge|sync|digest|tasks|30 virtual)/.test(l))
    }
    const cli = async (...args: ReadonlyArray<string>) =>
      (await tickwork([...args, "--store", file])).stdout
    expect(await start("1")).toEqual([
      "boot 1: created digest,cleanup",
      'trigger digest: ran "digest 1 manual", next run unchanged: true',
      "retry import: 1 failed, 2 succeeded",
      "charge-42 result: ch_4200 for 4200 cents",
      "sync-crm: failed",
      "30 virtual days: 30 digests, first 1970-01-01T03:00:00.000Z",
      "adoption 1: ok",
    ])
    // The operator, between the starts: the kept result, a retry, a run-now (twice: refused).
    expect(await cli("status", "charge-42")).toMatch(
      /^last result +\{"chargeId":"ch_4200","cents":4200\}$/m,
    )
    expect(await cli("retry", "sync-crm")).toBe(
      'retried "sync-crm": its failed slot runs again now\n',
    )
    expect(await cli("trigger", "cleanup")).toBe(
      'triggered "cleanup": it runs once now; its next run stays as it was\n',
    )
    expect(await cli("trigger", "cleanup")).toBe(
      '"cleanup" was not triggered: a manual run of it is already waiting to start\n',
    )
    expect(await cli("status", "sync-crm")).toMatch(/^state +scheduled$/m)
    // The second deployment changed the digest's cron: updated in place; it runs what was asked.
    expect(await start("2")).toEqual([
      "boot 2: created [] updated [digest (schedule)] unchanged [cleanup]",
      'digest: cron "30 3 * * *", same generation: true, ledger kept: true, then: updated',
      "tasks: charge-42,cleanup,digest,import,sync-crm",
      "boot 2 ran: cleanup 1 manual; sync-crm 2",
      "adoption 2: ok",
    ])
    expect(await cli("status", "sync-crm")).toMatch(/^state +done$/m)
    const ledger = await cli("ledger", "sync-crm")
    expect(ledger).toMatch(/ manual-retry by cli +.* attempt 2, due at /)
    expect(ledger).toMatch(/ ran: succeeded +.* 2 +\d+ms .* -> done$/m)
    expect(await cli("ledger", "cleanup")).toMatch(/ manual-trigger by cli /)
    expect(await cli("status", "cleanup")).toMatch(/^slot +20\d\d-\d\d-\d\dT04:00:00Z$/m)
  }, 300_000)

  it("flow control as a graphile-worker, BullMQ or pg-boss user tries it: keys in series, a rate limit, a handler limit, dedup keys, a bad limit, and a wait the CLI shows", async () => {
    const file = join(mkdtempSync(join(scratch, "flow-")), "tasks.db")
    const { stdout } = await run(process.execPath, [compile("flow"), file], {
      cwd: scratch,
      env: cleanEnv(),
      timeout: 120_000,
    })
    expect(stdout.split("\n").filter((l) => /^[a-z][a-z0-9 -]*[,:]/.test(l))).toEqual([
      "series per key: c42-a@0 c42-b@100 c42-c@200 | c7-a@0",
      'call-3 waits: rate-limited on group:partner until +1000 ms; waiting by cause: {"concurrency":0,"rate-limited":3}',
      "rate, from +1000 ms: call-1@1000 call-2@1000 call-3@2000 call-4@2000 call-5@3000",
      "emails: at most 2 at once, started at +0 0 50 50 100 100 150 150 ms",
      "singleton: created, then deduplicated (same task: true)",
      'debounce: created, then replaced (same task: true), moved +10000 ms, payload {"day":"tue"}',
      "bad limit: InvalidOption: limits.groups.partner.concurrency = 0",
      "live-2 waits: rate-limited on group:partner",
      "flow: ok",
    ])
    // The operator's view of the run left waiting on the file.
    const status = (await tickwork(["status", "live-2", "--store", file])).stdout
    expect(status).toMatch(/^state +scheduled \(waiting: rate-limited\)$/m)
    expect(status).toMatch(/^waiting +rate-limited on group:partner since \S+ until \S+$/m)
  }, 300_000)

  it("lists the tasks of a SQLite store, and serves its dashboard", async () => {
    const dir = mkdtempSync(join(scratch, "sqlite-"))
    const file = join(dir, "tasks.db")
    expectTwoTasks(await listTasks(file))
    expect(await dashboard(file)).toEqual(["nightly-report", "welcome-ada"])
  }, 300_000)

  it("lists the tasks of a PostgreSQL store, and serves its dashboard", async () => {
    const db = await freshDatabase()
    try {
      expectTwoTasks(await listTasks(db.url))
      expect(await dashboard(db.url)).toEqual(["nightly-report", "welcome-ada"])
    } finally {
      await db.drop()
    }
  }, 300_000)
})
