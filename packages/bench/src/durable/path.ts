/**
 * The path of one durable run, measured: which source files and functions of core, runtime and
 * durable a single one-shot run passes through, from `schedule` to its committed outcome.
 *
 * Method (the same for every version measured): two processes run the same program on a fresh
 * SQLite file under V8's precise coverage (`NODE_V8_COVERAGE`, call counts per function). The
 * program opens the store, starts a scheduler with one no-op handler, schedules one task due
 * 50 ms later (`run`) or nothing (`idle`), waits 300 ms, reads the task's status once (`done`
 * for `run`), and closes. A function is on the run's path when it was called
 * more often in `run` than in `idle`; a file is on it when one of its functions is. Startup and
 * close are the same in both and cancel out; an exclusive SQLite store does not poll, and the
 * lease renewer's first tick (10 s) comes after the close, so nothing else differs.
 *
 * ```sh
 * node packages/bench/src/durable/path.ts   # prints the files and functions, and their counts
 * ```
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Schedule } from "@tickwork/core"
import { DurableScheduler, Handler, Sqlite } from "@tickwork/durable"
import { Effect, Layer, Schema } from "effect"

const mode = process.argv[2]

if (mode === "run" || mode === "idle") {
  const dir = mkdtempSync(join(tmpdir(), "tickwork-path-"))
  const handler = Handler.make("noop", Schema.Struct({}), () => Effect.void)
  const live = DurableScheduler.layer({ handlers: [handler] }).pipe(
    Layer.provide(Sqlite.layer({ filename: join(dir, "tasks.db") })),
  )
  const program = Effect.gen(function* () {
    const d = yield* DurableScheduler.DurableScheduler
    if (mode === "run") {
      yield* d.schedule({ id: "one", handler, payload: {}, schedule: Schedule.once(50) })
    }
    // Both processes wait the same and read the same status once: only the run differs.
    yield* Effect.sleep(300)
    let end = yield* d.status("one")
    // A slow machine: wait longer (these extra reads then count as the run's; say so).
    for (let k = 0; mode === "run" && end !== "done" && k < 500; k++) {
      if (k === 0) console.error("path: the run took over 300 ms; status reads count in")
      yield* Effect.sleep(10)
      end = yield* d.status("one")
    }
    if (mode === "run" && end !== "done") throw new Error(`the run did not complete: ${end}`)
  })
  await Effect.runPromise(Effect.provide(program, live))
  rmSync(dir, { recursive: true, force: true })
} else {
  const self = fileURLToPath(import.meta.url)
  const root = fileURLToPath(new URL("../../../", import.meta.url))
  /** Call counts by `file#function@offset`, of the sources of core, runtime and durable. */
  const counts = (which: "run" | "idle"): Map<string, number> => {
    const out = mkdtempSync(join(tmpdir(), "tickwork-path-cov-"))
    const r = spawnSync(
      process.execPath,
      ["--conditions=@tickwork/source", "--import", "tsx", self, which],
      { env: { ...process.env, NODE_V8_COVERAGE: out }, stdio: "inherit" },
    )
    if (r.status !== 0) throw new Error(`the ${which} process failed`)
    const map = new Map<string, number>()
    for (const f of readdirSync(out)) {
      const cov = JSON.parse(readFileSync(join(out, f), "utf8")) as {
        result: Array<{
          url: string
          functions: Array<{
            functionName: string
            ranges: Array<{ startOffset: number; count: number }>
          }>
        }>
      }
      for (const s of cov.result) {
        const m = /\/packages\/(core|runtime|durable)\/src\/(.*\.ts)$/.exec(s.url)
        if (m === null) continue
        for (const fn of s.functions) {
          const range = fn.ranges[0]
          if (range === undefined) continue
          const key = `${m[1]}/src/${m[2]}#${fn.functionName || "(anonymous)"}@${range.startOffset}`
          map.set(key, (map.get(key) ?? 0) + range.count)
        }
      }
    }
    rmSync(out, { recursive: true, force: true })
    return map
  }
  const run = counts("run")
  const idle = counts("idle")
  const byFile = new Map<string, Array<string>>()
  for (const [key, n] of run) {
    if (n <= (idle.get(key) ?? 0)) continue
    const [file, fn] = key.split("#") as [string, string]
    byFile.set(file, [...(byFile.get(file) ?? []), fn.replace(/@\d+$/, "")])
  }
  const files = [...byFile.keys()].sort()
  for (const f of files) console.log(`${f}: ${(byFile.get(f) ?? []).join(", ")}`)
  const functions = files.reduce((a, f) => a + (byFile.get(f)?.length ?? 0), 0)
  console.log(`\n${root}: ${files.length} files, ${functions} functions on one run's path`)
}
