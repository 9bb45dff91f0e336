// tickwork's live view: a scheduler running a realistic mix of tasks, watched from a local web
// page. The scheduler's XState inspection stream (`inspect`), its run starts (`listener`) and its
// occurrence ledger (`occurrences`) are streamed over a WebSocket to the page, which draws each
// task's state on the task machine's diagram, a timeline of its runs, a lateness histogram, the
// circuit breakers and the control occurrences (pauses, resumes, breaker transitions).
//
//   pnpm --filter @tickwork/example-inspector start              then open the printed URL
//   pnpm --filter @tickwork/example-inspector start --port 0 --duration 30
//
// Options (or environment variables): --port / INSPECTOR_PORT (default 4477; a free port is used
// if it is taken; 0 = any free port), --host / INSPECTOR_HOST (default 127.0.0.1; beyond
// loopback the page needs a token: INSPECTOR_TOKEN, else a random one printed with its URL),
// --duration / INSPECTOR_DURATION (seconds; default: run until stopped with Ctrl-C).
import { Scheduler } from "@tickwork/runtime"
import { Cause, Effect, Exit, Fiber, Stream } from "effect"
import { number, option } from "./args.ts"
import { breakers, descriptions, limits, scheduleDemo } from "./demo.ts"
import * as LiveView from "./liveView.ts"

const DEFAULT_PORT = 4477

const portOption = number("port", option("port", "INSPECTOR_PORT"))
const durationSeconds = number("duration", option("duration", "INSPECTOR_DURATION"))
const host = option("host", "INSPECTOR_HOST")
const tokenFromEnv = process.env.INSPECTOR_TOKEN === "" ? undefined : process.env.INSPECTOR_TOKEN

const program = Effect.gen(function* () {
  const view = yield* LiveView.make({
    port: portOption ?? DEFAULT_PORT,
    fallback: portOption === undefined,
    ...(host === undefined ? {} : { host }),
    ...(tokenFromEnv === undefined ? {} : { token: tokenFromEnv }),
    descriptions,
  })
  const scheduler = yield* Scheduler.make({
    workers: 4,
    // Close fast when stopped: interrupt what still runs.
    shutdown: "interrupt",
    inspect: view.inspect,
    listener: view.listener,
    breakers,
    limits,
  })
  yield* Effect.forkScoped(
    Stream.runForEach(scheduler.occurrences, (o) => Effect.sync(() => view.occurrence(o))),
  )
  yield* Effect.forkScoped(view.watch(scheduler))
  yield* scheduleDemo(scheduler, view.scheduled)
  console.log(`tickwork live view: ${view.url}`)
  if (view.token !== undefined) {
    console.log(
      tokenFromEnv === undefined
        ? `token: ${view.token} (open ${view.url}#token=${view.token})`
        : "token: from INSPECTOR_TOKEN",
    )
  }
  if (durationSeconds === undefined) {
    console.log("Press Ctrl-C to stop.")
    yield* Effect.never
  } else {
    yield* Effect.sleep(durationSeconds * 1_000)
    const stats = yield* scheduler.stats
    console.log(
      `stopping after ${durationSeconds} s: ${stats.done} done, ${stats.failed} failed, ` +
        `${stats.cancelled} cancelled, ${stats.scheduled} scheduled, ${stats.running} running`,
    )
  }
})

const fiber = Effect.runFork(Effect.scoped(program))
const stop = () => Effect.runFork(Fiber.interrupt(fiber))
process.once("SIGINT", stop)
process.once("SIGTERM", stop)
fiber.addObserver((exit) => {
  process.off("SIGINT", stop)
  process.off("SIGTERM", stop)
  if (Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause)) {
    console.error(String(exit.cause))
    process.exitCode = 1
  }
})
