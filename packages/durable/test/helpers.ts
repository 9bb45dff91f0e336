/** Shared test fixtures: a temp SQLite file per test, recording handlers, scoped schedulers. */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, type Layer, Schema, type Scope } from "effect"
import { TestClock } from "effect/testing"
import { DurableScheduler, Handler, Sqlite, type TaskStore } from "../src/index.ts"

/** Every directory made here: whatever a test leaves is removed when its worker exits. */
const made = new Set<string>()
process.once("exit", () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

/** A fresh directory for one test's files, deleted by `cleanup` (or when the worker exits). */
export const tempDir = (): {
  readonly dir: string
  readonly file: (name?: string) => string
  readonly cleanup: () => void
} => {
  const dir = mkdtempSync(join(tmpdir(), "tickwork-durable-"))
  made.add(dir)
  return {
    dir,
    file: (name = "tasks.db") => join(dir, name),
    cleanup: () => {
      rmSync(dir, { recursive: true, force: true })
      made.delete(dir)
    },
  }
}

/** One recorded run: `label@startedAt` plus the run info. */
export interface Seen {
  readonly id: string
  readonly slot: number
  readonly attempt: number
  readonly delivery: number
  readonly startedAt: number
  readonly scheduledFor: number
  readonly payload: unknown
}

/** A handler named `name` whose payload is `{ n: number }`, recording every run. */
export const recording = (name = "record") => {
  const seen: Array<Seen> = []
  const handler = Handler.make(name, Schema.Struct({ n: Schema.Number }), (payload, run) =>
    Effect.sync(() => {
      seen.push({
        id: run.id,
        slot: run.slot,
        attempt: run.attempt,
        delivery: run.delivery,
        startedAt: run.startedAt,
        scheduledFor: run.scheduledFor,
        payload,
      })
    }),
  )
  return { seen, handler }
}

/** A SQLite store on `file`. */
export const sqlite = (file: string): Layer.Layer<TaskStore.TaskStore, unknown> =>
  Sqlite.layer({ filename: file })

/** Runs `body` with a durable scheduler (and its store) living for the body's duration. */
export const withScheduler = <A, E, R, H extends Handler.Any>(
  store: Layer.Layer<TaskStore.TaskStore, unknown>,
  options: DurableScheduler.DurableSchedulerOptions<H>,
  body: (d: DurableScheduler.DurableSchedulerShape) => Effect.Effect<A, E, R>,
): Effect.Effect<A, unknown, Exclude<R, Scope.Scope> | Handler.Services<H>> =>
  // The scheduler's scope closes before the store's: it completes or releases its runs first.
  Effect.scoped(
    Effect.gen(function* () {
      const { durable } = yield* DurableScheduler.make(options)
      return yield* body(durable)
    }),
  ).pipe(Effect.provide(store))

/**
 * Lets work started outside the clock (a test's own `schedule` calls) finish: yields until the
 * scheduler is idle. `TestClock.adjust` awaits only work that its own wake-ups start.
 */
export const settle = (d: DurableScheduler.DurableSchedulerShape): Effect.Effect<void> =>
  Effect.gen(function* () {
    for (let k = 0; k < 10_000; k++) {
      yield* Effect.yieldNow
      if (yield* d.idle) return
    }
  })

/** Settles, then moves the TestClock by `ms`, then settles again. */
export const advance = (
  d: DurableScheduler.DurableSchedulerShape,
  ms: number,
): Effect.Effect<void> => Effect.andThen(settle(d), Effect.andThen(TestClock.adjust(ms), settle(d)))

/** Runs `body` with the path of a fresh store file in a temporary folder, removed afterwards. */
export const inFile = <A>(body: (file: string) => Effect.Effect<A, unknown>) =>
  Effect.gen(function* () {
    const t = tempDir()
    try {
      return yield* body(t.file())
    } finally {
      t.cleanup()
    }
  })

/** A handler named `name` that records `<id>@<startedAt>` and fails for the ids in `failing`. */
export const failingMail = (name = "mail") => {
  const runs: Array<string> = []
  const failing = new Set<string>()
  const handler = Handler.make(name, Schema.Struct({}), (_, run) =>
    Effect.suspend(() => {
      runs.push(`${run.id}@${run.startedAt}`)
      return failing.has(run.id) ? Effect.fail("smtp down") : Effect.void
    }),
  )
  return { runs, failing, handler }
}
