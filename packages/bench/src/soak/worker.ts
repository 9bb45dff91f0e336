/**
 * A durable worker process of the soak: `worker.ts <url> <owner> <t0> <windowMs>`. Runs a durable
 * scheduler with the no-op "soak" handler, and every window (aligned to `t0`, epoch ms) prints
 * one JSON line: `{ w, heap, rss, lat }`, its window index, heap used and RSS in bytes (heap after
 * a full GC when `--expose-gc`), and its runs' lateness as sparse `[ms, count]` pairs. Prints
 * `ready` once it claims.
 */
import { DurableScheduler, Handler, Postgres } from "@tickwork/durable"
import { Effect, Layer, Schema } from "effect"
import { Lateness } from "./window.ts"

const [url, owner, t0Text, windowText] = process.argv.slice(2) as [string, string, string, string]
const t0 = Number(t0Text)
const windowMs = Number(windowText)
let lateness = new Lateness()

const handler = Handler.make("soak", Schema.Struct({}), (_, run) =>
  Effect.sync(() => lateness.add(run.startedAt - run.scheduledFor)),
)

const report = (w: number) => {
  ;(globalThis as { gc?: () => void }).gc?.()
  const m = process.memoryUsage()
  process.stdout.write(
    `${JSON.stringify({ w, heap: m.heapUsed, rss: m.rss, lat: lateness.sparse() })}\n`,
  )
  lateness = new Lateness()
}
let w = Math.floor((Date.now() - t0) / windowMs)
const tick = () => {
  report(w)
  w++
  setTimeout(tick, Math.max(0, t0 + (w + 1) * windowMs - Date.now()))
}
setTimeout(tick, Math.max(0, t0 + (w + 1) * windowMs - Date.now()))

await Effect.runPromise(
  Effect.gen(function* () {
    console.log("ready")
    yield* Effect.never
  }).pipe(
    Effect.provide(
      DurableScheduler.layer({ handlers: [handler], owner, workers: 64 }).pipe(
        Layer.provide(Postgres.layer({ url, maxConnections: 6 })),
      ),
    ),
  ),
)
