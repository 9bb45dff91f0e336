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
import * as Dashboard from "./dashboard.ts"

const option = (name: string, env: string): string | undefined => {
  const args = process.argv.slice(2)
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string
    if (arg === `--${name}`) return args[i + 1]
    if (arg.startsWith(`--${name}=`)) return arg.slice(name.length + 3)
  }
  return process.env[env]
}

const number = (name: string, text: string | undefined): number | undefined => {
  if (text === undefined || text === "") return undefined
  const n = Number(text)
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new Error(`--${name} must be a whole number >= 0, got ${JSON.stringify(text)}`)
  }
  return n
}

const store = option("store", "TICKWORK_STORE")
if (store === undefined) {
  console.error("--store is required: a SQLite file path or a postgres:// URL")
  process.exit(1)
}
const port = number("port", option("port", "DASHBOARD_PORT")) ?? 4478
const durationSeconds = number("duration", option("duration", "DASHBOARD_DURATION"))

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
