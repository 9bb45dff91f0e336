// tickwork's dashboard over a durable store: the fleet's tasks by state, lease owners, the
// recent ledger and lateness, read-only, from a local web page.
//
//   pnpm --filter @tickwork/example-inspector dashboard --store ./tasks.db
//   pnpm --filter @tickwork/example-inspector dashboard --store postgres://user@host/db --port 0
//
// Options (or environment variables): --store / TICKWORK_STORE (a SQLite file path or a
// postgres:// URL; required), --port / DASHBOARD_PORT (default 4478, on 127.0.0.1; 0 = any free
// port), --duration / DASHBOARD_DURATION (seconds; default: until stopped with Ctrl-C).
// A SQLite store can be read while its worker runs if the worker opens it with
// `Sqlite.layer({ filename, exclusive: false })`; PostgreSQL needs nothing.
import { Cause, Effect, Exit, Fiber } from "effect"
import { number, option } from "./args.ts"
import * as Dashboard from "./dashboard.ts"

const store = option("store", "TICKWORK_STORE")
if (store === undefined) {
  console.error("--store is required: a SQLite file path or a postgres:// URL")
  process.exit(1)
}
const port = number("port", option("port", "DASHBOARD_PORT"), true) ?? 4478
const durationSeconds = number("duration", option("duration", "DASHBOARD_DURATION"), true)

const program = Effect.gen(function* () {
  const { url } = yield* Dashboard.serve({ store, port })
  console.log(`tickwork dashboard: ${url}`)
  if (durationSeconds === undefined) yield* Effect.never
  else yield* Effect.sleep(durationSeconds * 1_000)
})

const fiber = Effect.runFork(Effect.scoped(program))
const stop = () => Effect.runFork(Fiber.interrupt(fiber))
process.once("SIGINT", stop)
process.once("SIGTERM", stop)
fiber.addObserver((exit) => {
  process.off("SIGINT", stop)
  process.off("SIGTERM", stop)
  if (Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause)) {
    const error = Cause.squash(exit.cause)
    console.error(
      error instanceof Error || (typeof error === "object" && error !== null && "message" in error)
        ? (error as { message: string }).message
        : String(error),
    )
    process.exitCode = 1
  }
})
