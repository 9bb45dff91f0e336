// tickwork durable demo: tasks that survive a crash.
//
//   pnpm --filter @tickwork/example-durable start
//
// 1. Starts a worker process on a fresh SQLite store; it schedules five tasks and runs them.
// 2. Kills it with SIGKILL 100 ms after its 400 ms report has started (about 2 s in), so the
//    report is cut off mid-run.
// 3. Waits 2 s (the slots due meanwhile are missed), then starts a new worker on the same file.
//    It schedules nothing: the tasks come back from the store, the report cut off by the crash
//    runs again (delivery 2), and each task's missed-run policy decides what happens to the
//    slots missed while down — catch-up runs them all, coalesce runs one, skip drops them.
// 4. The new worker closes by itself after 3 s; this program then exits 0.
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const dir = mkdtempSync(join(tmpdir(), "tickwork-durable-demo-"))
const file = join(dir, "tasks.db")
const worker = fileURLToPath(new URL("./worker.ts", import.meta.url))
const start = Date.now()
const at = () => `+${((Date.now() - start) / 1000).toFixed(2)}s`

// The child runs under the same loader and conditions as this process (tsx, @tickwork/source).
const run = (runFor: number) =>
  spawn(process.execPath, [...process.execArgv, worker, file, String(start), String(runFor)], {
    stdio: ["ignore", "pipe", "inherit"],
  })

/** Shows the worker's output as this program's. */
const forward = (p: ReturnType<typeof run>) => {
  p.stdout?.setEncoding("utf8")
  p.stdout?.on("data", (chunk: string) => process.stdout.write(chunk))
}

/**
 * Resolves once the worker prints a line matching `line`. Waiting for what the worker says, not
 * for a fixed time, keeps the demo's story whatever the machine's load (a worker that starts
 * slowly would otherwise be killed before it ran anything). Bounded: after 30 s it resolves.
 */
const whenPrinted = (p: ReturnType<typeof run>, line: RegExp) =>
  new Promise<void>((resolve) => {
    const bound = setTimeout(resolve, 30_000)
    p.stdout?.on("data", (chunk: string) => {
      if (line.test(chunk)) {
        clearTimeout(bound)
        resolve()
      }
    })
  })

const exited = (p: ReturnType<typeof run>) =>
  new Promise<number | null>((resolve) =>
    p.once("exit", (code, signal) => resolve(code ?? (signal === null ? null : -1))),
  )

console.log(`store: ${file}`)
const first = run(60_000)
forward(first)
await whenPrinted(first, /report +slot .* started/)
await new Promise((resolve) => setTimeout(resolve, 100))
first.kill("SIGKILL")
await exited(first)
console.log(`${at()}  killed worker ${first.pid} with SIGKILL; down for 2 s`)
await new Promise((resolve) => setTimeout(resolve, 2_000))
console.log(`${at()}  starting a new worker on the same store`)
const second = run(3_000)
forward(second)
const code = await exited(second)
rmSync(dir, { recursive: true, force: true })
console.log(`${at()}  done (the second worker exited ${code})`)
process.exit(code === 0 ? 0 : 1)
